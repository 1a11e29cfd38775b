; apxtui — Python query (tree-sitter-python 0.25).
;
; Capture names follow tree-sitter's code-navigation "tags" convention
; (@name, @definition.function, @definition.class, @reference.call), plus
; apxtui's own captures listed below.  The extractor (apxtui/parse/python.py)
; reads the captured nodes; it never walks up the tree: enclosing scopes come
; from the captured def/class bodies and contexts from the @context.* patterns,
; nested by byte range (apxtui/parse/nesting.py, apxtui/parse/contexts.py).
;
; To extend: add a pattern that uses one of these capture names (keep them
; exactly as written).  Captures starting with "_" are helpers for predicates
; and are ignored by the extractor.
;
;   @definition.function / @definition.class   a def / class node (+ @name,
;                                                @definition.body: its scope)
;   @decorator + @decorated                      a decorator and the def it decorates
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
;   @env.write                                   `os.environ[X] = …` / `del os.environ[X]`:
;                                                the subscript is not a read
;   @string                                      a string literal (weight-name candidate)
;   @string.bare                                 a string that is a whole statement
;                                                (docstring): not a candidate
;   @string.template + @string.args             a string formatted by `.format(...)`
;                                                or `%` (args are the format arguments)
;   @context.*                                   branch / loop / match / except /
;                                                lambda contexts of calls: the capture
;                                                names are documented in
;                                                apxtui/parse/contexts.py

; ---------------------------------------------------------------- definitions

(function_definition
  name: (identifier) @name
  body: (_) @definition.body) @definition.function

(class_definition
  name: (identifier) @name
  body: (_) @definition.body) @definition.class

(decorated_definition
  (decorator) @decorator
  definition: (_) @decorated)

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

; os.environ["NAME"] = v / del os.environ["NAME"]: writes, not reads
(assignment
  left: (subscript
    value: [(identifier) (attribute)] @_w
    (#match? @_w "(^|\\.)environ$")) @env.write)

(delete_statement
  (subscript
    value: [(identifier) (attribute)] @_w
    (#match? @_w "(^|\\.)environ$")) @env.write)

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

; a string statement (docstring): not a tensor-name candidate
(expression_statement (string) @string.bare)

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

; ---------------------------------------------------------------- contexts
; See apxtui/parse/contexts.py for the capture names.

; if / elif / else: one dispatch point; an elif condition runs only when the
; earlier conditions were false (it gets that else context)
(if_statement
  condition: (_) @context.condition
  consequence: (_) @context.body) @context.if

(if_statement
  alternative: (elif_clause
    condition: (_) @context.condition @context.elif_condition
    consequence: (_) @context.body) @context.if) @context.chain

(if_statement
  alternative: (else_clause
    body: (_) @context.body) @context.else) @context.chain

; a if c else b
(conditional_expression
  . (_) @context.body
  . (_) @context.condition) @context.if

(conditional_expression
  . (_)
  . (_) @context.condition
  . (_) @context.body) @context.else

; loops: the while condition runs on every iteration too
(for_statement
  right: (_) @context.condition
  body: (_) @context.body) @context.loop

(while_statement
  condition: (_) @context.condition @context.body
  body: (_) @context.body) @context.loop

; comprehensions: each clause guards the body and the clauses after it
(list_comprehension
  body: (_) @context.body
  (for_in_clause
    right: (_) @context.condition) @context.loop) @context.rest

(list_comprehension
  body: (_) @context.body
  (if_clause
    (_) @context.condition) @context.if) @context.rest

(set_comprehension
  body: (_) @context.body
  (for_in_clause
    right: (_) @context.condition) @context.loop) @context.rest

(set_comprehension
  body: (_) @context.body
  (if_clause
    (_) @context.condition) @context.if) @context.rest

(dictionary_comprehension
  body: (_) @context.body
  (for_in_clause
    right: (_) @context.condition) @context.loop) @context.rest

(dictionary_comprehension
  body: (_) @context.body
  (if_clause
    (_) @context.condition) @context.if) @context.rest

(generator_expression
  body: (_) @context.body
  (for_in_clause
    right: (_) @context.condition) @context.loop) @context.rest

(generator_expression
  body: (_) @context.body
  (if_clause
    (_) @context.condition) @context.if) @context.rest

; match / case (the guard's env reads count); an arm belongs to the innermost
; match around it
(match_statement
  subject: (_) @context.subject) @context.match

(case_clause
  guard: (_)? @context.guard
  consequence: (_) @context.body) @context.arm

; try / except handlers (also except*), numbered within the innermost try
(try_statement) @context.match

(except_clause
  (block) @context.body) @context.except

(lambda
  body: (_) @context.body) @context.closure
