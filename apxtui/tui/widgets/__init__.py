"""The explorer's panes, one widget per module."""

from __future__ import annotations


def keyed_widgets() -> list[type]:
    """Widgets that define key bindings (their ids may appear in a user keymap)."""
    from apxtui.tui.widgets.call_tree import CallTree  # lazy: the package stays importable by its modules
    from apxtui.tui.widgets.details_pane import DetailsPane  # lazy: the package stays importable by its modules
    from apxtui.tui.widgets.entry_list import EntryList  # lazy: the package stays importable by its modules
    from apxtui.tui.widgets.map_view import MapView  # lazy: the package stays importable by its modules
    from apxtui.tui.widgets.sol_panel import SolResult  # lazy: the package stays importable by its modules
    from apxtui.tui.widgets.source_view import SourceView  # lazy: the package stays importable by its modules

    return [CallTree, DetailsPane, EntryList, MapView, SolResult, SourceView]
