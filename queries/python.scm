; apxtui — Python query (tree-sitter-python 0.25).
;
; Capture names follow tree-sitter's code-navigation "tags" convention
; (@name, @definition.function, @definition.class, @reference.call), plus
; apxtui's own captures listed below.  The extractor (apxtui/parse/python.py)
; reads the captured nodes; enclosing scopes, branch/loop contexts and
; qualified names are worked out in Python by walking ancestors, so a pattern
; only has to point at the construct.
;
; To extend: add a pattern that uses one of these capture names (keep them
; exactly as written).  Captures starting with "_" are helpers for predicates
; and are ignored by the extractor.
;
;   @definition.function / @definition.class   a def / class node (+ @name)
;   @reference.call                              a call expression (+ @name)
;   @import                                      an import / from-import statement
;   @assign                                      an assignment (locals, class fields,
;                                                env values flowing into conditions)
;   @with.item                                   `with Callee(...) as x` (locals)
;   @env.read                                    an environment-variable read; with
;     @env.base   the object read (`os.environ`, `os.getenv`, `environ`), checked
;                 against the file's imports: it must resolve to os.environ / os.getenv
;     @env.name   the variable name expression (a string, or a constant's name)
;     @env.default  (optional) the default value expression; without it the
;                 extractor takes the 2nd positional or `default=` argument
;   @string                                      a string literal (weight-name candidate)
;   @string.template + @string.args             a string formatted by `.format(...)`
;                                                or `%` (args are the format arguments)

; ---------------------------------------------------------------- definitions

(function_definition
  name: (identifier) @name) @definition.function

(class_definition
  name: (identifier) @name) @definition.class

; ---------------------------------------------------------------- calls

; f(x), a.b.c(x), self.blocks[i].forward(x), get()()
(call
  function: [
    (identifier) @name
    (attribute attribute: (identifier) @name)
    (_)
  ]) @reference.call

; ---------------------------------------------------------------- imports

(import_statement) @import
(import_from_statement) @import

; ---------------------------------------------------------------- assignments

; x = Callee(...), x: T = ..., self.x = Callee(...), class-level `x: T`
(assignment) @assign

; with Callee(...) as x:
(with_item value: (as_pattern)) @with.item

; ---------------------------------------------------------------- environment

; os.environ["NAME"], environ["NAME"]
(subscript
  value: [(identifier) (attribute)] @env.base
  subscript: (_) @env.name
  (#match? @env.base "(^|\\.)environ$")) @env.read

; os.environ.get("NAME", default), environ.get(...), os.environ.setdefault(...)
(call
  function: (attribute
    object: [(identifier) (attribute)] @env.base
    attribute: (identifier) @_get)
  arguments: (argument_list . (_) @env.name)
  (#match? @env.base "(^|\\.)environ$")
  (#any-of? @_get "get" "setdefault")) @env.read

; os.getenv("NAME", default), getenv(...)
(call
  function: [(identifier) (attribute)] @env.base
  arguments: (argument_list . (_) @env.name)
  (#match? @env.base "(^|\\.)getenv$")) @env.read

; "NAME" in os.environ  /  "NAME" not in os.environ
(comparison_operator
  . (_) @env.name
  .
  [(identifier) (attribute)] @env.base .
  (#match? @env.base "(^|\\.)environ$")) @env.read

; ---------------------------------------------------------------- strings

; every string literal; the extractor keeps those that look like tensor names
; (contain "." or "{", no whitespace).  f-strings are marked "fstring".
(string) @string

; "layers.{}.weight".format(i)
(call
  function: (attribute
    object: (string) @string.template
    attribute: (identifier) @_fmt)
  arguments: (argument_list) @string.args
  (#eq? @_fmt "format"))

; "layers.%d.weight" % i
(binary_operator
  left: (string) @string.template
  operator: "%"
  right: (_) @string.args)
