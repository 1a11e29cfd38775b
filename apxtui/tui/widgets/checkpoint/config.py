"""Config & totals tab: config dims with their source keys, totals by dtype and module, repeated tensors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.widgets import DataTable

from apxtui.textsafe import one_line
from apxtui.tui.text import label
from apxtui.tui.widgets.checkpoint.common import MAX_ROWS, TableTab, lit, mb, shape

if TYPE_CHECKING:
    from apxtui.checkpoint.model import Checkpoint
    from apxtui.checkpoint.summary import Summary


class ConfigTab(TableTab):
    TITLE = "Config"

    def compose(self) -> ComposeResult:
        yield DataTable(cursor_type="row", zebra_stripes=True, id="config-table")

    def on_mount(self) -> None:
        self.table.add_columns("what", "value", "name", "source")

    def show(self, ckpt: Checkpoint, s: Summary) -> None:
        rows: list[tuple[str, str, str, str]] = []  # what, value, name, source
        for sec, dims in s.dims.items():
            for k, d in dims.items():
                val = str(d.value) if not isinstance(d.value, dict) else \
                    ", ".join(f"{a}={b}" for a, b in list(d.value.items())[:4])
                rows.append((f"dim [{sec}]", val, k,
                             d.source + (" (derived)" if d.derived and "derived" not in d.source else "")))
        if not s.dims:
            rows.append(("dim", "—", "—", "no config.json beside the checkpoint" if not ckpt.config_file
                         else f"{ckpt.config_file} states no model dimension"))
        for t in s.by_dtype:
            rows.append(("total dtype", f"{t.tensors:,} tensors, {mb(t.bytes)} MB", t.key, f"{t.params:,} params"))
        for t in s.by_module:
            rows.append(("total module", f"{t.tensors:,} tensors, {mb(t.bytes)} MB", t.key, f"{t.params:,} params"))
        for r in s.rows:
            if r.count > 1:
                rows.append(("repeated", f"×{r.count} ({' × '.join(r.indices)})", r.pattern,
                             f"{','.join(r.dtypes)} {' | '.join(shape(x) for x in r.shapes[:2])}"))
        table = self.table
        self.set_loading(False)
        table.clear()
        table.add_rows([tuple(lit(c, 80) for c in r) for r in rows[:MAX_ROWS]])
        table.border_title = label(f"Config {one_line(str(ckpt.config_file or '(none)'), 80)}: "
                                   f"{sum(len(d) for d in s.dims.values())} dims; totals")
