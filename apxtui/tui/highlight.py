"""Syntax highlighting for the source pane: language by file name, and CUDA/C++ for TextArea.

Textual ships Rust and Python highlighting; CUDA/C/C++ is registered per TextArea with
tree-sitter-cuda and the query below (tree-sitter-cuda's own highlights.scm only adds the
CUDA keywords on top of an ``inherits: cpp`` that py-tree-sitter does not follow).
"""

from __future__ import annotations

from functools import cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Language

CUDA_EXT = {".cu", ".cuh", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".inl"}
LANG_BY_EXT = {".rs": "rust", ".py": "python", ".pyi": "python", ".toml": "toml", ".md": "markdown",
               ".json": "json", ".yaml": "yaml", ".yml": "yaml"}

_KEYWORDS = """
"if" "else" "for" "while" "do" "switch" "case" "default" "break" "continue" "goto" "return"
"struct" "class" "union" "enum" "typedef" "template" "typename" "using" "namespace" "operator"
"const" "constexpr" "static" "inline" "extern" "volatile" "mutable" "virtual" "override" "explicit"
"friend" "public" "private" "protected" "sizeof" "new" "delete" "throw" "try" "catch" "noexcept"
"decltype" "thread_local" "register" "signed" "unsigned" "long" "short"
"""

CUDA_HIGHLIGHTS = f"""
[{_KEYWORDS}] @keyword
["__global__" "__device__" "__host__" "__shared__" "__constant__" "__restrict__" "__forceinline__"
 "__noinline__" "__launch_bounds__"] @keyword.function
["#include" "#define" "#if" "#ifdef" "#ifndef" "#else" "#elif" "#endif" "defined"] @include
(preproc_directive) @include
(comment) @comment
[(string_literal) (raw_string_literal) (char_literal) (system_lib_string)] @string
(number_literal) @number
[(true) (false)] @boolean
[(null) (this)] @constant.builtin
[(primitive_type) (sized_type_specifier) (auto)] @type.builtin
(type_identifier) @type
(namespace_identifier) @type.class
(function_declarator declarator: (identifier) @function)
(function_declarator declarator: (qualified_identifier name: (identifier) @function))
(call_expression function: (identifier) @function.call)
(call_expression function: (qualified_identifier name: (identifier) @function.call))
(call_expression function: (field_expression field: (field_identifier) @method.call))
(template_function name: (identifier) @function.call)
["<<<" ">>>"] @punctuation.special
["(" ")" "[" "]" "{{" "}}"] @punctuation.bracket
"""


def language_for(path: str) -> str | None:
    ext = PurePosixPath(path).suffix.lower()
    return "cuda" if ext in CUDA_EXT else LANG_BY_EXT.get(ext)


@cache
def cuda_language() -> Language | None:
    """The tree-sitter Language for CUDA/C++ (None when tree-sitter-cuda is missing)."""
    try:
        import tree_sitter_cuda
        from tree_sitter import Language
    except ImportError:
        return None
    return Language(tree_sitter_cuda.language())
