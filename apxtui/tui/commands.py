"""Command palette providers: actions (screens, export, copy, entries) and any symbol by fuzzy name."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher
from textual.markup import escape

from apxtui.textsafe import one_line


def highlight(matcher: Matcher, title: str) -> Content:
    """Like ``Matcher.highlight`` but for literal text (the stock one parses markup)."""
    content = Content(title)
    score, offsets = matcher.fuzzy_search.match(matcher.query, title)
    if score:
        for o in offsets:
            if not title[o].isspace():
                content = content.stylize(matcher.match_style, o, o + 1)
    return content


SCREENS = [("explorer", "1"), ("kernels", "2"), ("capture", "3"), ("checkpoint", "4"), ("profile", "5")]
MAX_HITS = 100


class ExplorerCommands(Provider):
    """"category: action" commands built from the current state."""

    def _commands(self, with_entries: bool) -> list[tuple[str, Callable[[], object], str]]:
        screen = self.screen
        app = self.app
        out: list[tuple[str, Callable[[], object], str]] = [
            (f"screen: {name}", partial(app.switch_mode, name), f"key {key}") for name, key in SCREENS
        ]
        out += [
            ("export: call path as markdown", partial(screen.run_action, "export"), "key e"),
            ("copy: report to the clipboard (OSC 52)", partial(screen.run_action, "copy"), "key y"),
            ("index: problems (skipped files, syntax errors)", partial(screen.run_action, "problems"), "key i"),
            ("entry: filter entry points", partial(screen.run_action, "filter"), "key /"),
            ("help: keys", partial(app.run_action, "help"), "key ?"),
        ]
        if with_entries:  # computed once per session by the explorer
            set_entry = screen.set_entry  # type: ignore[attr-defined]  # the explorer screen
            for e in getattr(screen, "entries", []):
                out.append((f"entry: {one_line(e.qualname, 120)}", partial(set_entry, e.node), e.group))
        return out

    async def discover(self) -> Hits:
        for title, cb, help_text in self._commands(with_entries=False):
            yield DiscoveryHit(Content(title), cb, text=title, help=escape(help_text))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, cb, help_text in self._commands(with_entries=True):
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, highlight(matcher, title), cb, text=title, help=escape(help_text))


class SymbolCommands(Provider):
    """Jump to any symbol of the graph (moves the cursor when it is in the tree, else traces from it)."""

    async def startup(self) -> None:
        session = getattr(self.screen, "session", None)
        self._symbols = session.symbols() if session is not None else []

    async def search(self, query: str) -> Hits:
        q = "".join(query.lower().split())
        if len(q) < 2:
            return
        # prefilter: every query character in order (cheap), then the fuzzy matcher on at most 400
        cands = []
        for qual, node, info in self._symbols:
            low = qual.lower()
            pos = 0
            for ch in q:
                pos = low.find(ch, pos)
                if pos < 0:
                    break
                pos += 1
            else:
                cands.append((qual, node, info))
                if len(cands) >= 400:
                    break
        matcher = self.matcher(query)
        scored = []
        for qual, node, info in cands:
            title = f"symbol: {one_line(qual, 120)}"
            score = matcher.match(title)
            if score > 0:
                scored.append((score, title, node, info))
        scored.sort(key=lambda s: -s[0])
        jump_to = self.screen.jump_to  # type: ignore[attr-defined]  # the explorer screen
        for score, title, node, info in scored[:MAX_HITS]:
            yield Hit(score, highlight(matcher, title), partial(jump_to, node), text=title,
                      help=escape(one_line(info, 100)))
