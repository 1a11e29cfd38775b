; apxtui — Rust facts query (tree-sitter-rust 0.24)
;
; Capture names follow tree-sitter's tags.scm convention (`@name`,
; `@definition.*`, `@reference.*`) plus apxtui's own captures listed below.
; apxtui/parse/rust.py dispatches on the capture NAMES, not on pattern order,
; so a pattern added here with an existing capture name is picked up without
; touching Python.  The Python side never walks up the tree: module path, impl
; container, enclosing fn, cfg chain and branch/loop/closure/cfg contexts come
; from the @scope.* and @context.* captures nested by byte range
; (apxtui/parse/nesting.py, apxtui/parse/contexts.py).
;
; Captures used by apxtui:
;   @definition.function   function_item (free fn, impl method, trait default,
;                          nested fn: Python tells them apart by ancestors)
;   @definition.method     trait method declaration without a body
;   @definition.class      struct / enum / union / type alias
;   @definition.interface  trait
;   @ffi.block / @ffi.decl `extern "C" { fn ...; }` block and each fn in it
;   @import                `use` item; @import.tree is its argument
;   @definition.macro_rules `macro_rules! name { … }` (Import kind "macro_rules": linking
;                          expands its item-level invocations that define functions)
;   @import.mod            `mod foo;` (module declared in another file)
;   @reference.call        path call `f()`, `a::b()`, `Self::f()`, `<T as U>::f()`
;   @reference.method      method call `recv.m()`; @receiver is `recv`
;   @reference.indirect    call of a computed value `(self.f)(x)`, `f()()`
;   @reference.macro       macro invocation `foo!(...)` (never expanded)
;     with @callee (the called path/name), @args, @type_args (turbofish)
;   @env.read              environment variable read; @env.name its argument
;   @binding.register      PyO3 module registration; @binding.member.<what>
;                          is the registered item (class/function/module)
;   @local                 `let` statement (local variable types)
;   @fnptr.field           struct literal field set from a call (@fnptr.struct, .name, .value)
;   @string                string literal (tensor-name candidates)
;   @scope.mod / .impl / .trait / .foreign / .const / .macro / .ignore
;                          items and macro calls whose range matters to what is
;                          inside: module path, container, cfg chain, the const a
;                          string or env read belongs to, the macro a string is an
;                          argument of; strings inside @scope.ignore (attributes,
;                          `extern "C"`) are not tensor names
;   @const.value / @const.item
;                          the value of a const/static item, and the item
;   @chain.try / @chain.inner
;                          `x?` and its operand (method chains after an env read)
;   @attr.before / @attr.next
;                          an attribute or comment and the named node after it
;                          (a flag goes to the item after its run of attributes)
;   @context.*             branch / match / loop / closure / cfg contexts of calls
;                          (names: apxtui/parse/contexts.py)
;   @exit.return           `return` expression: an if / match arm that returns
;                          (attrs.exits of the enclosing fn) guards what follows
;   attribute flags: an `attribute_item` captured as @attr.<flag> or
;   @binding.pyo3.<flag> gives <flag> to the item it precedes (inner
;   `#![...]` attributes to their enclosing file/mod/fn); @attr.value is the
;   flag's argument text.
;
; Note: tree-sitter 0.26's Python binding ignores `#not-any-of?`; use
; `#not-match?` with an anchored regex to exclude names.

; ---------------------------------------------------------------------------
; Definitions
; ---------------------------------------------------------------------------

; fn items anywhere (free fns, impl methods, trait default methods, nested fns)
(function_item
  name: (identifier) @name) @definition.function

; trait method declared without a default body: `trait T { fn m(&self); }`
(trait_item
  body: (declaration_list
    (function_signature_item
      name: (identifier) @name) @definition.method))

; ADTs and type aliases (kept for receiver-type resolution)
(struct_item
  name: (type_identifier) @name) @definition.class

(enum_item
  name: (type_identifier) @name) @definition.class

(union_item
  name: (type_identifier) @name) @definition.class

(type_item
  name: (type_identifier) @name) @definition.class

; traits
(trait_item
  name: (type_identifier) @name) @definition.interface

; fns declared in `extern "C" { ... }` (also `unsafe extern "C"`): C ABI imports
(foreign_mod_item
  body: (declaration_list
    (function_signature_item
      name: (identifier) @name) @ffi.decl)) @ffi.block

; ---------------------------------------------------------------------------
; Imports and modules
; ---------------------------------------------------------------------------

; `use a::b::{c, d as e, f::*};` — Python expands the tree into leaves
(use_declaration
  argument: (_) @import.tree) @import

; `mod foo;` — a module whose body lives in another file
(mod_item
  name: (identifier) @name
  !body) @import.mod

; macro_rules! definitions (item-level invocations are expanded at link time)
(macro_definition
  name: (identifier) @name) @definition.macro_rules

; ---------------------------------------------------------------------------
; Calls
; ---------------------------------------------------------------------------

; f(x), a::b::f(x), Self::f(x), super::f(x), <T as Trait>::f(x), B::op(x).
; Enum/Option/Result constructors are not calls.
(call_expression
  function: [(identifier) (scoped_identifier)] @callee
  arguments: (arguments) @args
  (#not-match? @callee "^(Some|Ok|Err)$")) @reference.call

; turbofish: f::<T>(x), a::b::<T>(x)
(call_expression
  function: (generic_function
    function: [(identifier) (scoped_identifier)] @callee
    type_arguments: (type_arguments) @type_args)
  arguments: (arguments) @args) @reference.call

; method calls: recv.m(x), recv.m::<T>(x)
(call_expression
  function: (field_expression
    value: (_) @receiver
    field: (field_identifier) @callee)
  arguments: (arguments) @args) @reference.method

(call_expression
  function: (generic_function
    function: (field_expression
      value: (_) @receiver
      field: (field_identifier) @callee)
    type_arguments: (type_arguments) @type_args)
  arguments: (arguments) @args) @reference.method

; calls of computed values: (self.f)(x), make()(x), table[i](x)
(call_expression
  function: [(parenthesized_expression) (call_expression) (index_expression)] @callee
  arguments: (arguments) @args) @reference.indirect

; macro invocations, except std formatting/assertion/logging macros, which are
; not call sites (their token trees are not parsed, so calls inside them are lost)
(macro_invocation
  macro: [(identifier) @name
          (scoped_identifier name: (identifier) @name)] @callee
  (token_tree) @args
  (#not-match? @name "^(println|print|eprintln|eprint|format|format_args|write|writeln|vec|assert|assert_eq|assert_ne|debug_assert|debug_assert_eq|debug_assert_ne|panic|todo|unimplemented|unreachable|matches|concat|stringify|include_str|include_bytes|env|option_env|cfg|dbg|info|warn|error|debug|trace|anyhow|bail|ensure)$")) @reference.macro

; ---------------------------------------------------------------------------
; Environment variables
; ---------------------------------------------------------------------------

; std::env::var("X"), env::var_os("X"), ::std::env::var(NAME)
(call_expression
  function: (scoped_identifier) @_fn
  arguments: (arguments . (_) @env.name)
  (#match? @_fn "^(::)?(std::)?env::var(_os)?$")) @env.read

; env!("X"), option_env!("X") (compile-time)
(macro_invocation
  macro: (identifier) @_m
  (token_tree . (_) @env.name)
  (#any-of? @_m "env" "option_env")) @env.read

; ---------------------------------------------------------------------------
; Attributes (flags given to the following item)
; ---------------------------------------------------------------------------

; #[cfg(pred)] / #![cfg(pred)]: @attr.value is `(pred)`
(attribute_item
  (attribute
    (identifier) @_a
    arguments: (token_tree) @attr.value
    (#eq? @_a "cfg"))) @attr.cfg

(inner_attribute_item
  (attribute
    (identifier) @_a
    arguments: (token_tree) @attr.value
    (#eq? @_a "cfg"))) @attr.cfg

; #[no_mangle] and the 2024-edition #[unsafe(no_mangle)]
(attribute_item
  (attribute
    (identifier) @_a
    (#eq? @_a "no_mangle"))) @attr.no_mangle

(attribute_item
  (attribute
    (identifier) @_u
    arguments: (token_tree (identifier) @_a)
    (#eq? @_u "unsafe")
    (#eq? @_a "no_mangle"))) @attr.no_mangle

; #[export_name = "sym"] / #[unsafe(export_name = "sym")]
(attribute_item
  (attribute
    (identifier) @_a
    value: (string_literal) @attr.value
    (#eq? @_a "export_name"))) @attr.export_name

(attribute_item
  (attribute
    (identifier) @_u
    arguments: (token_tree (identifier) @_a . "=" . (string_literal) @attr.value)
    (#eq? @_u "unsafe")
    (#eq? @_a "export_name"))) @attr.export_name

; #[link_name = "sym"] on a fn in an extern block
(attribute_item
  (attribute
    (identifier) @_a
    value: (string_literal) @attr.value
    (#eq? @_a "link_name"))) @attr.link_name

; #[link(name = "lib")] on an extern block
(attribute_item
  (attribute
    (identifier) @_a
    arguments: (token_tree) @attr.value
    (#eq? @_a "link"))) @attr.link

; PyO3: #[pyclass], #[pyclass(name = "X")], #[pyo3::pyclass]
(attribute_item
  (attribute
    [(identifier) @_a (scoped_identifier name: (identifier) @_a)]
    arguments: (token_tree)? @attr.value
    (#eq? @_a "pyclass"))) @binding.pyo3.class

(attribute_item
  (attribute
    [(identifier) @_a (scoped_identifier name: (identifier) @_a)]
    (#eq? @_a "pymethods"))) @binding.pyo3.methods

(attribute_item
  (attribute
    [(identifier) @_a (scoped_identifier name: (identifier) @_a)]
    arguments: (token_tree)? @attr.value
    (#eq? @_a "pyfunction"))) @binding.pyo3.function

(attribute_item
  (attribute
    [(identifier) @_a (scoped_identifier name: (identifier) @_a)]
    arguments: (token_tree)? @attr.value
    (#eq? @_a "pymodule"))) @binding.pyo3.module

(attribute_item
  (attribute
    (identifier) @_a
    (#eq? @_a "pymodule_export"))) @binding.pyo3.export

; #[pyo3(name = "...", ...)] options on any PyO3 item
(attribute_item
  (attribute
    (identifier) @_a
    arguments: (token_tree) @attr.value
    (#eq? @_a "pyo3"))) @binding.pyo3.options

; method kinds inside #[pymethods]; #[getter(name)] carries the Python name
(attribute_item
  (attribute
    (identifier) @_a
    (#eq? @_a "new"))) @binding.pyo3.new

(attribute_item
  (attribute
    (identifier) @_a
    arguments: (token_tree)? @attr.value
    (#eq? @_a "getter"))) @binding.pyo3.getter

(attribute_item
  (attribute
    (identifier) @_a
    arguments: (token_tree)? @attr.value
    (#eq? @_a "setter"))) @binding.pyo3.setter

(attribute_item
  (attribute
    (identifier) @_a
    (#any-of? @_a "staticmethod" "classmethod" "classattr"))) @binding.pyo3.kind

; ---------------------------------------------------------------------------
; PyO3 module registrations (inside a #[pymodule] fn or a helper it calls)
; ---------------------------------------------------------------------------

; m.add_class::<T>()
(call_expression
  function: (generic_function
    function: (field_expression
      field: (field_identifier) @_m)
    type_arguments: (type_arguments . (_) @binding.member.class))
  (#eq? @_m "add_class")) @binding.register

; m.add_function(wrap_pyfunction!(f, m)?), m.add_wrapped(wrap_pyfunction!(f))
(macro_invocation
  macro: [(identifier) @_w (scoped_identifier name: (identifier) @_w)]
  (token_tree) @binding.member.function
  (#eq? @_w "wrap_pyfunction")) @binding.register

; m.add_wrapped(wrap_pymodule!(sub))
(macro_invocation
  macro: [(identifier) @_w (scoped_identifier name: (identifier) @_w)]
  (token_tree) @binding.member.module
  (#eq? @_w "wrap_pymodule")) @binding.register

; ---------------------------------------------------------------------------
; Locals and strings
; ---------------------------------------------------------------------------

; let x: T = v;  let x = Type::new(..);  let x = Type { .. };
(let_declaration
  pattern: (_) @local.name) @local

; a struct field set from a call's value: `S { launcher: pick(dtype).expect(..), .. }`
; (a call through `(self.launcher)(..)` in S's methods dispatches over what `pick` returns)
(struct_expression
  name: (_) @fnptr.struct
  body: (field_initializer_list
    (field_initializer
      field: (field_identifier) @fnptr.name
      value: [(call_expression) (try_expression)] @fnptr.value) @fnptr.field))

; return expressions (an arm that returns early guards the rest of the function)
(return_expression) @exit.return

; string literals (Python keeps those that look like tensor names)
[(string_literal) (raw_string_literal)] @string

; ---------------------------------------------------------------------------
; Scopes (ranges that matter to the code inside them)
; ---------------------------------------------------------------------------

(mod_item body: (_)) @scope.mod
(impl_item) @scope.impl
(trait_item) @scope.trait
(foreign_mod_item) @scope.foreign
(const_item) @scope.const
(static_item) @scope.const
(macro_invocation) @scope.macro
(attribute_item) @scope.ignore
(inner_attribute_item) @scope.ignore
(extern_modifier) @scope.ignore

(const_item value: (_) @const.value) @const.item
(static_item value: (_) @const.value) @const.item

(try_expression (_) @chain.inner) @chain.try

; each attribute (or comment) and the named node after it: a flag goes to the
; item after its run of attributes and comments
([(attribute_item) (line_comment) (block_comment)] @attr.before
  .
  (_) @attr.next)

; ---------------------------------------------------------------------------
; Contexts (see apxtui/parse/contexts.py for the capture names)
; ---------------------------------------------------------------------------

; if / else if / else: the else clause continues its if, an if inside an else
; continues that clause
(if_expression
  condition: (_) @context.condition
  consequence: (_) @context.body) @context.if

(if_expression
  alternative: (else_clause) @context.link) @context.chain

(else_clause
  (if_expression) @context.link) @context.chain

(else_clause
  (block) @context.body) @context.else

; a match arm belongs to the innermost match around it
(match_expression
  value: (_) @context.subject) @context.match

(match_arm
  pattern: (_) @context.pattern
  value: (_) @context.body) @context.arm

(for_expression
  value: (_) @context.condition
  body: (_) @context.body) @context.loop

(while_expression
  condition: (_) @context.condition
  body: (_) @context.body) @context.loop

(loop_expression
  body: (_) @context.body) @context.loop

(closure_expression
  body: (_) @context.body) @context.closure

; #[cfg(pred)] on the item or statement after it, on a match arm (its first two
; attributes), on a struct-literal field (its first attribute)
((attribute_item
  (attribute
    (identifier) @_a
    arguments: (token_tree) @context.condition
    (#eq? @_a "cfg"))) @context.cfg
  .
  (_) @context.next)

(match_arm
  .
  (attribute_item
    (attribute
      (identifier) @_a
      arguments: (token_tree) @context.condition
      (#eq? @_a "cfg"))) @context.cfg) @context.target

(match_arm
  .
  (attribute_item)
  .
  (attribute_item
    (attribute
      (identifier) @_a
      arguments: (token_tree) @context.condition
      (#eq? @_a "cfg"))) @context.cfg) @context.target

(field_initializer
  .
  (attribute_item
    (attribute
      (identifier) @_a
      arguments: (token_tree) @context.condition
      (#eq? @_a "cfg"))) @context.cfg) @context.target
