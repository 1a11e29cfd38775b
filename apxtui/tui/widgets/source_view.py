"""The source pane: a read-only, highlighted TextArea that marks one line of one file.

Moving between rows only moves the cursor; a file shown before comes back from a small cache
(document, wrapping, highlights and size, keyed by language and content), and the highlight
query is compiled once per language, so a keypress that changes file costs no re-parse.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from textual._tree_sitter import TREE_SITTER, get_language
from textual.binding import Binding
from textual.cache import LRUCache
from textual.document._document import Document, DocumentBase
from textual.document._document_navigator import DocumentNavigator
from textual.document._syntax_aware_document import SyntaxAwareDocument, SyntaxAwareDocumentError
from textual.document._wrapped_document import WrappedDocument
from textual.geometry import Size
from textual.strip import Strip
from textual.theme import Theme
from textual.timer import Timer
from textual.widgets import TextArea
from textual.widgets.text_area import Selection
from tree_sitter import Language, Parser, Query

from apxtui.textsafe import neutralise, one_line
from apxtui.tui.highlight import CUDA_HIGHLIGHTS, cuda_language, language_for
from apxtui.tui.text import label
from apxtui.tui.widgets.quiet import QuietSize

MAX_HIGHLIGHT_LINES = 10_000
MAX_HIGHLIGHT_BYTES = 1_000_000
DOCUMENTS = 48  # files whose document, wrapping and highlights stay ready
WARM_LANGUAGES = ("rust", "python", "cuda")  # highlight queries compiled once the pane is idle after start
PREFETCH_AFTER = 0.04  # seconds without a key before the next document of a nearby row is built
PREFETCH_MAX_LINES = 4_000  # larger files are built when shown (a key meanwhile would wait for the build)
LINE_CACHE = 1024  # rendered lines kept per document (TextArea's own cache size)


class _CountedHeight(WrappedDocument):
    """Textual's ``height`` re-sums every line's wrap offsets, and the TextArea asks for it once per rendered
    line (~120 times per keypress on a big file).  One visual line is one ``_offset_to_line_info`` entry."""

    @property
    def height(self) -> int:
        return len(self._offset_to_line_info)


class _BytesParsedDocument(SyntaxAwareDocument):
    """Textual's, parsed from the document's bytes in one call instead of a callback per line (about a third
    less time; the same bytes the callback gives, every line with its newline, so the same tree)."""

    def __init__(self, text: str, language: Language) -> None:
        Document.__init__(self, text)
        self.language = language
        self._parser = Parser(language)
        nl = self.newline
        self._syntax_tree = self._parser.parse((nl.join(self._lines) + nl).encode())


def highlight_map(document: DocumentBase, query: Any) -> defaultdict[int, list[tuple[int, int | None, str]]]:
    """Row → highlights of a document, as ``TextArea._build_highlight_map`` builds them (same order), but
    for any document: not only the one the TextArea shows (so documents can be built ahead)."""
    highlights: defaultdict[int, list[tuple[int, int | None, str]]] = defaultdict(list)
    if not query or not isinstance(document, SyntaxAwareDocument):
        return highlights
    for name, nodes in document.query_syntax_tree(query).items():
        for node in nodes:
            (start_row, start_col), (end_row, end_col) = node.start_point, node.end_point
            if start_row == end_row:
                highlights[start_row].append((start_col, end_col, name))
            else:
                highlights[start_row].append((start_col, None, name))
                for row in range(start_row + 1, end_row):
                    highlights[row].append((0, None, name))
                highlights[end_row].append((0, end_col, name))
    return highlights


@dataclass
class _Doc:
    """A shown file's document, its wrapping and highlights, and its size once measured."""

    document: DocumentBase
    wrapped: WrappedDocument
    query: Any
    highlights: Any
    size: Size | None = None
    #: Its rendered lines (TextArea's ``_line_cache``, whose keys name no document): a file shown again
    #: repaints from here instead of rendering every line in view again.
    lines: LRUCache[tuple[Any, ...], Strip] = field(default_factory=lambda: LRUCache(LINE_CACHE))


class SourceView(QuietSize, TextArea):
    """Shows ``file`` around ``line``; text is neutralised (no escapes reach the terminal).  A new file's size
    re-lays-out the screen only when a scrollbar comes or goes (:class:`QuietSize`)."""


    _QUERIES: ClassVar[dict[str, Any]] = {}  # language → compiled highlight query

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="source.down", tooltip="Next line"),
        Binding("k", "cursor_up", "Up", show=False, id="source.up", tooltip="Previous line"),
        Binding("h", "cursor_left", "Left", show=False, id="source.left", tooltip="Previous column"),
        Binding("l", "cursor_right", "Right", show=False, id="source.right", tooltip="Next column"),
        Binding("g", "top", "Top", show=False, id="source.top", tooltip="First line"),
        Binding("G", "bottom", "Bottom", show=False, id="source.bottom", tooltip="Last line"),
        Binding("ctrl+d", "cursor_page_down", "Page down", show=False, id="source.page_down",
                tooltip="Half a page down"),
        Binding("ctrl+u", "cursor_page_up", "Page up", show=False, id="source.page_up", tooltip="Half a page up"),
        Binding("backspace", "screen.back", "Back", show=False, id="source.back", tooltip="Back to the previous row"),
        Binding("m", "mark", "Marked line", show=False, id="source.mark", tooltip="Return to the marked line"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        self._docs: dict[tuple[str | None, str], _Doc] = {}  # (language, text) → document, oldest first
        self._doc: _Doc | None = None  # the one shown
        super().__init__("", language=None, theme="monokai", soft_wrap=False, read_only=True,
                         show_line_numbers=True, highlight_cursor_line=True, tab_behavior="focus", **kwargs)
        self.cursor_blink = False  # read-only view: a steady cursor is calmer over SSH (and deterministic)
        lang = cuda_language()
        if lang is not None:
            self.register_language("cuda", lang, CUDA_HIGHLIGHTS)
        self.root: Path | None = None
        self.file: str = ""
        self.line: int = 0
        self.plain = False
        self._texts: dict[str, str] = {}
        self._ahead: list[str] = []  # files whose documents are built ahead (see prefetch)
        self._ahead_timer: Timer | None = None

    @property
    def wrapped_document(self) -> WrappedDocument:
        return self._wrapped

    @wrapped_document.setter
    def wrapped_document(self, doc: WrappedDocument) -> None:
        if type(doc) is WrappedDocument:
            doc.__class__ = _CountedHeight
        self._wrapped = doc

    def _set_document(self, text: str, language: str | None) -> None:
        """TextArea's, from the cache of documents when this text was shown before."""
        key = (language, text)
        got = self._docs.pop(key, None) or self._new_document(text, language)
        self._docs[key] = got
        while len(self._docs) > DOCUMENTS:
            self._docs.pop(next(iter(self._docs)))
        self._doc = got
        self.document, self._highlight_query, self._highlights = got.document, got.query, got.highlights
        self.wrapped_document = got.wrapped
        self.navigator = DocumentNavigator(got.wrapped)
        self._line_cache = got.lines
        self.move_cursor((0, 0))
        self._rewrap_and_refresh_virtual_size()

    def _new_document(self, text: str, language: str | None) -> _Doc:
        """A document of ``text`` parsed and highlighted (the query compiled once per language)."""
        doc: DocumentBase = Document(text)
        query = None
        lang = self._tree_sitter_language(language)
        if lang is not None and language is not None:
            try:
                doc = _BytesParsedDocument(text, lang)
            except SyntaxAwareDocumentError:
                pass
            else:
                query = self._query(language)
        return _Doc(doc, WrappedDocument(doc, tab_width=self.indent_width), query, highlight_map(doc, query))

    def _tree_sitter_language(self, language: str | None) -> Any:
        if not (TREE_SITTER and language):
            return None
        reg = self._languages.get(language)
        return reg.language if reg is not None and reg.language is not None else get_language(language)

    def _query(self, language: str) -> Any:
        """The compiled highlight query of ``language`` (compiled once per process: 20-40 ms each)."""
        query = self._QUERIES.get(language)
        if query is None:
            reg = self._languages.get(language)
            source = reg.highlight_query if reg is not None else self._get_builtin_highlight_query(language)
            query = self._QUERIES[language] = Query(self._tree_sitter_language(language), source)
        return query

    def _warm_queries(self) -> None:
        """Compile the next code language's highlight query while nothing else happens (one per call), so
        the first file of each language shown costs no compile on a keypress."""
        todo = [lang for lang in WARM_LANGUAGES if lang not in self._QUERIES and lang in self.available_languages
                and self._tree_sitter_language(lang) is not None]
        if todo:
            self._query(todo[0])
            if len(todo) > 1:
                self.set_timer(0.05, self._warm_queries)

    def _rewrap_and_refresh_virtual_size(self) -> None:
        """TextArea's, without re-wrapping a cached document already wrapped at this width."""
        w = self.wrapped_document
        if (w._width, w._tab_width) != (self.wrap_width, self.indent_width):
            w.wrap(self.wrap_width, tab_width=self.indent_width)
            self._line_cache.clear()
        self._refresh_size()

    def notify_style_update(self) -> None:
        """A style change (theme, focus) changes how every document's lines look, not only the one shown."""
        for doc in self._docs.values():
            doc.lines.clear()
        super().notify_style_update()

    def _refresh_size(self) -> None:
        """TextArea's, with the document's size (a scan of every line) kept with the cached document."""
        if self.soft_wrap:
            super()._refresh_size()
            return
        got = self._doc if self._doc is not None and self._doc.document is self.document else None
        size = got.size if got is not None and got.size is not None else self.document.get_size(self.indent_width)
        if got is not None:
            got.size = size
        self.virtual_size = Size(size.width + self.gutter_width + 1, size.height)
        self._refresh_scrollbars()

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._on_theme)
        self._on_theme(self.app.current_theme)
        self.set_timer(0.5, self._warm_queries)

    def _on_theme(self, theme: Theme) -> None:
        self.theme = "monokai" if getattr(theme, "dark", True) else "github_light"

    def _read(self, rel: str) -> str | None:
        if rel not in self._texts:
            if self.root is None:
                return None
            try:
                raw = (self.root / rel).read_bytes()
            except OSError:
                return None
            if len(self._texts) > 32:
                self._texts.pop(next(iter(self._texts)))
            self._texts[rel] = neutralise(raw.decode("utf-8", errors="replace"))
        return self._texts[rel]

    def _language(self, rel: str, text: str) -> tuple[bool, str | None]:
        """(plain: too large to highlight, the highlighting language or None) of file ``rel``."""
        plain = text.count("\n") + 1 > MAX_HIGHLIGHT_LINES or len(text) > MAX_HIGHLIGHT_BYTES
        lang = None if plain else language_for(rel)
        return plain, lang if lang in self.available_languages else None

    def prefetch(self, files: list[str]) -> None:
        """Build the documents of ``files`` (those of the rows near the cursor, nearest first) once no key has
        come for a moment, one per timer tick, so moving onto them needs no parse or highlighting."""
        self._ahead = [f for f in dict.fromkeys(files) if f and f != self.file][:DOCUMENTS // 4]
        if self._ahead_timer is not None:
            self._ahead_timer.stop()
        self._ahead_timer = self.set_timer(PREFETCH_AFTER, self._prefetch_next) if self._ahead else None

    def _prefetch_next(self) -> None:
        while self._ahead:
            rel = self._ahead.pop(0)
            text = self._read(rel)
            if text is None or text.count("\n") > PREFETCH_MAX_LINES:
                continue
            lang = self._language(rel, text)[1]
            if (lang, text) in self._docs:
                continue
            got = self._docs[lang, text] = self._new_document(text, lang)
            while len(self._docs) > DOCUMENTS:
                self._docs.pop(next(iter(self._docs)))
            if (got.wrapped._width, got.wrapped._tab_width) != (self.wrap_width, self.indent_width):
                got.wrapped.wrap(self.wrap_width, tab_width=self.indent_width)
            got.size = got.document.get_size(self.indent_width)
            break
        self._ahead_timer = self.set_timer(PREFETCH_AFTER, self._prefetch_next) if self._ahead else None

    def show(self, rel: str, line: int, what: str) -> None:
        """Open ``rel`` (relative to the checkout) and mark ``line`` (1-based); ``what`` names the line."""
        if not rel:
            self.file, self.line = "", 0
            self.plain = True
            self.set_reactive(TextArea.language, None)
            self.load_text("(no source: this symbol has no definition in the checkout)")
            self.border_title = label("Source")
            self.border_subtitle = label(what, 80)
            return
        loaded = rel != self.file
        if loaded:
            text = self._read(rel)
            if text is None:
                self.file = ""
                self.set_reactive(TextArea.language, None)
                self.load_text(f"(cannot read {one_line(rel, 300)})")
                self.border_title = label("Source")
                return
            self.plain, lang = self._language(rel, text)
            self.set_reactive(TextArea.language, lang)  # one document for the new text, in its language
            self.load_text(text)
            self.file = rel
        self.line = line
        with self._repainting(rows=(0, self.outer_size.height - 1)):  # the border rows that show them
            self.border_title = label(f"{rel}:{line}", 200)
            self.border_subtitle = label(what + ("  · plain text (large file)" if self.plain else ""), 120)
        self.action_mark()
        if loaded:
            self.call_after_refresh(self._center)  # again once laid out: the pane may have just changed size

    def action_mark(self) -> None:
        if not self.file:
            return
        row = max(0, min(self.line - 1, self.document.line_count - 1))
        old = self.selection
        with self._repainting(lines=(*range(min(old.start[0], old.end[0]), max(old.start[0], old.end[0]) + 1), row)):
            # select the line with the cursor at its start, so the view does not scroll sideways
            self.selection = Selection((row, len(self.document.get_line(row))), (row, 0))
        self._center()

    def _center(self) -> None:
        self.scroll_to(x=0, animate=False, immediate=True)
        self.scroll_cursor_visible(center=True, animate=False)

    def action_top(self) -> None:
        self.move_cursor((0, 0))

    def action_bottom(self) -> None:
        self.move_cursor((self.document.line_count - 1, 0))
