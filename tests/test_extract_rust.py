"""Rust extractor: one small source per rule, asserting on the extracted records."""

from __future__ import annotations

import textwrap

from apxtui.facts import FileFacts
from apxtui.parse import extract_file

FILE = "crates/x/src/a.rs"


def ex(src: str, module: str = "x::a") -> FileFacts:
    return extract_file(FILE, textwrap.dedent(src).encode(), "rust", module)


def defs(f: FileFacts) -> dict:
    return {d.qualname: d for d in f.defs}


def calls(f: FileFacts, callee: str) -> list:
    return [c for c in f.calls if c.callee == callee]


def call(f: FileFacts, callee: str):
    found = calls(f, callee)
    assert len(found) == 1, [c.callee for c in f.calls]
    return found[0]


def ctx(c) -> list[tuple[str, str]]:
    return [(x.kind, x.text) for x in c.contexts]


# -- definitions -------------------------------------------------------------------------


def test_free_fn_params_return_visibility():
    f = ex("""
        pub(crate) fn rms_norm(x: &Tensor, mut eps: f32) -> Result<Tensor> { todo!() }
        fn private() {}
    """)
    d = defs(f)["x::a::rms_norm"]
    assert d.kind == "rust_fn" and d.name == "rms_norm"
    assert [(p.name, p.type) for p in d.params] == [("x", "&Tensor"), ("eps", "f32")]
    assert d.return_type == "Result<Tensor>"
    assert d.visibility == "pub(crate)"
    assert defs(f)["x::a::private"].visibility == ""
    assert (d.line, d.end_line) == (2, 2)


def test_impl_methods_generic_and_trait_impl():
    f = ex("""
        impl<B: Backend> Block<B> where B: Clone {
            pub fn forward<T: Into<u8>>(&mut self, x: &B::Tensor) -> B::Tensor where T: Copy { todo!() }
            fn by_val(self) {}
            fn by_ref(&'a self) {}
        }
        impl fmt::Display for Block<Cpu> {
            fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
        }
    """)
    d = defs(f)
    fw = d["x::a::Block::forward"]
    assert fw.container == "Block" and fw.trait == ""
    assert fw.params[0].name == "self" and fw.params[0].type == "&mut self"
    assert fw.template_params == ["T"]
    assert fw.generic_bounds == {"B": ["Backend", "Clone"], "T": ["Into<u8>", "Copy"]}
    assert d["x::a::Block::by_val"].params[0].type == "self"
    assert d["x::a::Block::by_ref"].params[0].type == "&self"
    fm = d["x::a::Block::fmt"]
    assert fm.container == "Block" and fm.trait == "Display"
    assert fm.attrs["trait_qualname"] == "<Block as Display>::fmt"
    assert fm.attrs["trait_path"] == "fmt::Display"


def test_impl_for_reference_and_dyn_types():
    f = ex("""
        impl<'a, T: Op> Op for &'a mut T { fn run(&self) {} }
        impl dyn Backend { fn describe(&self) {} }
    """)
    d = defs(f)
    assert d["x::a::T::run"].trait == "Op" and d["x::a::T::run"].generic_bounds == {"T": ["Op"]}
    assert d["x::a::Backend::describe"].container == "Backend"


def test_trait_items_decl_and_default():
    f = ex("""
        pub trait Backend: Sized {
            fn matmul(&self, a: &Self::T) -> Self::T;
            fn name(&self) -> &str { "b" }
        }
    """)
    d = defs(f)
    assert d["x::a::Backend::matmul"].attrs == {"trait_decl": True}
    assert d["x::a::Backend::matmul"].container == "Backend"
    assert d["x::a::Backend::name"].attrs.get("trait_default") is True
    t = d["x::a::Backend"]
    assert t.kind == "rust_type" and t.attrs["kind"] == "trait"
    assert t.attrs["methods"] == ["matmul", "name"]


def test_inline_mod_extends_module_path_and_nested_fn():
    f = ex("""
        mod outer {
            pub mod inner {
                pub fn deep() { helper(); fn helper() { leaf(); } }
            }
        }
    """)
    d = defs(f)
    assert "x::a::outer::inner::deep" in d
    nested = d["x::a::outer::inner::deep::helper"]
    assert nested.attrs["nested_in"] == "x::a::outer::inner::deep"
    assert call(f, "leaf").caller == "x::a::outer::inner::deep::helper"
    assert call(f, "helper").caller == "x::a::outer::inner::deep"


def test_structs_enums_aliases():
    f = ex("""
        pub struct Cfg<B: Backend> { pub hidden: usize, layers: Vec<Block<B>> }
        struct Pair(u32, pub f32);
        enum LoadedModel { Text(TextModel), Vla { m: VlaModel }, Empty }
        type Alias = Block<Cuda>;
    """)
    d = defs(f)
    assert d["x::a::Cfg"].fields == {"hidden": "usize", "layers": "Vec<Block<B>>"}
    assert d["x::a::Cfg"].template_params == ["B"] and d["x::a::Cfg"].visibility == "pub"
    assert d["x::a::Pair"].fields == {"0": "u32", "1": "f32"}
    assert d["x::a::LoadedModel"].attrs["variants"] == ["Text", "Vla", "Empty"]
    assert d["x::a::Alias"].attrs == {"kind": "type_alias", "aliased": "Block<Cuda>"}


def test_cfg_on_item_and_enclosing_impl_and_mod():
    f = ex("""
        #![cfg(feature = "cuda")]
        #[cfg(all(not(apxinf_fa2_sm80), not(apxinf_cutlass_fmha)))]
        mod m {
            #[cfg(feature = "fp8")]
            impl Lin {
                /// doc
                #[cfg(target_os = "linux")]
                #[inline]
                fn go(&self) {}
            }
        }
    """)
    d = defs(f)["x::a::m::Lin::go"]
    assert d.cfg == [
        'feature = "cuda"',
        "all(not(apxinf_fa2_sm80), not(apxinf_cutlass_fmha))",
        'feature = "fp8"',
        'target_os = "linux"',
    ]


def test_extern_block_decls_and_link_name():
    f = ex("""
        #[link(name = "apx_kernels")]
        extern "C" {
            #[link_name = "apx_rms_norm_bf16"]
            pub fn rms_norm_bf16(x: *const u16, n: i32) -> i32;
            fn plain(stream: *mut c_void);
        }
    """)
    d = defs(f)
    r = d["x::a::rms_norm_bf16"]
    assert r.kind == "ffi_decl" and r.symbol == "apx_rms_norm_bf16"
    assert [(p.name, p.type) for p in r.params] == [("x", "*const u16"), ("n", "i32")]
    assert r.return_type == "i32" and r.visibility == "pub"
    assert r.attrs["link"] == "apx_kernels" and r.attrs["abi"] == "C"
    assert d["x::a::plain"].symbol == "plain"


def test_no_mangle_and_extern_c_fns():
    f = ex("""
        #[no_mangle]
        pub extern "C" fn apx_init() {}
        #[unsafe(no_mangle)]
        pub fn apx_two() {}
        extern "C" fn callback(x: i32) {}
        pub fn normal() {}
    """)
    d = defs(f)
    assert d["x::a::apx_init"].symbol == "apx_init" and d["x::a::apx_init"].attrs["extern_c"] is True
    assert d["x::a::apx_two"].symbol == "apx_two" and d["x::a::apx_two"].attrs["no_mangle"] is True
    assert d["x::a::callback"].attrs["extern_c"] is True and d["x::a::callback"].attrs["no_mangle"] is False
    assert d["x::a::normal"].symbol == "" and "extern_c" not in d["x::a::normal"].attrs


def test_locals_types():
    f = ex("""
        fn run(cfg: &Cfg) {
            let a: Vec<f32> = vec![];
            let mut b = ffi::Stream::new(0)?;
            let c = Tensor::from_slice(&x).unwrap();
            let d = Runner { cfg };
            let e = helper::make();
            let g = Vec::<u8>::with_capacity(3);
        }
    """)
    loc = defs(f)["x::a::run"].locals
    assert loc == {"a": "Vec<f32>", "b": "ffi::Stream", "c": "Tensor", "d": "Runner", "g": "Vec"}


# -- imports -------------------------------------------------------------------------------


def test_use_resolution_alias_glob_reexport():
    f = ex(
        """
        use super::ffi::{self, rms as r};
        use crate::kernels::*;
        pub use self::inner::Thing;
        use std::sync::Arc;
        use super::super::top;
        #[cfg(feature = "py")]
        use pyo3::prelude::*;
        mod inner { use super::sib::Sib; }
        pub mod child;
        fn f() { use crate::local::only; }
        """,
        module="apxinf_cuda::a::b::c",
    )
    got = {(i.path, i.alias): i for i in f.imports}
    assert ("apxinf_cuda::a::b::ffi", "ffi") in got
    assert ("apxinf_cuda::a::b::ffi::rms", "r") in got
    assert ("apxinf_cuda::kernels", "*") in got
    thing = got[("apxinf_cuda::a::b::c::inner::Thing", "Thing")]
    assert thing.public and thing.scope == "apxinf_cuda::a::b::c"
    assert not got[("std::sync::Arc", "Arc")].public
    assert ("apxinf_cuda::a::top", "top") in got
    assert got[("pyo3::prelude", "*")].cfg == ['feature = "py"']
    sib = got[("apxinf_cuda::a::b::c::sib::Sib", "Sib")]
    assert sib.scope == "apxinf_cuda::a::b::c::inner"
    mod = got[("apxinf_cuda::a::b::c::child", "child")]
    assert mod.kind == "mod" and mod.public
    only = got[("apxinf_cuda::local::only", "only")]
    assert only.scope == "apxinf_cuda::a::b::c::f"


# -- calls -------------------------------------------------------------------------------------


def test_call_kinds():
    f = ex("""
        impl<B: Backend> Model<B> {
            fn forward(&self, x: B::T) {
                let y = rms_norm(&x, 1e-6);
                ffi::launch(y);
                Self::step(x);
                super::helpers::go();
                crate::ops::add(x);
                Vec::<f32>::with_capacity(4);
                collect::<Vec<u8>>(it);
                <B as Backend>::matmul(a, b);
                B::add(a, b);
                self.blocks[i].forward(x);
                ffi::Foo::new().run();
                (self.hook)(x);
                Some(3);
            }
        }
    """)
    assert call(f, "rms_norm").path == ["rms_norm"] and call(f, "rms_norm").args == ["&x", "1e-6"]
    assert call(f, "rms_norm").caller == "x::a::Model::forward"
    assert call(f, "ffi::launch").path == ["ffi", "launch"]
    assert call(f, "Self::step").kind == "call"
    assert call(f, "super::helpers::go").path == ["super", "helpers", "go"]
    assert call(f, "crate::ops::add").path == ["crate", "ops", "add"]
    wc = call(f, "Vec::with_capacity")
    assert wc.attrs["path_type_args"] == ["<f32>"] and wc.template_args == []
    tf = call(f, "collect")
    assert tf.template_args == ["Vec<u8>"] and tf.text == "collect::<Vec<u8>>(it)"
    q = call(f, "<B as Backend>::matmul")
    assert q.path == ["<B as Backend>", "matmul"]
    assert call(f, "B::add").kind == "call"
    m = call(f, "forward")
    assert (m.kind, m.path, m.receiver) == ("method", ["forward"], "self.blocks[i]")
    assert call(f, "run").receiver == "ffi::Foo::new()"
    assert call(f, "ffi::Foo::new").kind == "call"
    assert call(f, "(self.hook)").attrs["indirect"] is True
    assert not calls(f, "Some")


def test_module_scope_call_has_no_caller_and_long_args_truncated():
    long = "a" * 300
    f = ex(f"""
        static X: Lazy<u8> = Lazy::new(|| compute());
        fn g() {{ h({long}); }}
    """)
    assert call(f, "compute").caller == ""
    assert call(f, "compute").contexts[0].kind == "closure"
    c = call(f, "h")
    assert len(c.args[0]) <= 120 and len(c.text) <= 200


def test_macros_wrapped_calls_and_std_macros_skipped():
    f = ex("""
        fn f() {
            launch!(ffi::rms_norm(x, y), stream.sync(), 3);
            apx::kernel_call!(go(1));
            println!("{}", skipped(1));
            let v = vec![a(1)];
            assert_eq!(b(1), 2);
            log::info!("x");
            tracing::debug!("y");
            format!("{}", c());
        }
    """)
    names = [c.callee for c in f.calls if c.kind == "macro"]
    assert names == ["launch!", "apx::kernel_call!"]
    m = call(f, "launch!")
    assert m.attrs["wrapped_calls"] == ["ffi::rms_norm", ".sync"]
    assert m.args == ["ffi::rms_norm(x, y)", "stream.sync()", "3"]
    assert call(f, "apx::kernel_call!").path == ["apx", "kernel_call!"]


# -- contexts ----------------------------------------------------------------------------------


def test_if_else_if_else_chain():
    f = ex("""
        fn f(x: u32) {
            if x > 4 { big(); } else if let Some(y) = opt { mid(y); } else { small(); }
            if cond(x) { inside(); }
        }
    """)
    big, mid, small = call(f, "big"), call(f, "mid"), call(f, "small")
    assert ctx(big) == [("if", "x > 4")] and big.contexts[0].arm == 0
    assert ctx(mid) == [("if", "let Some(y) = opt")] and mid.contexts[0].arm == 1
    e = small.contexts[0]
    assert (e.kind, e.text, e.arm, e.negated) == ("else", "else", 2, ["x > 4", "let Some(y) = opt"])
    assert big.contexts[0].group == mid.contexts[0].group == e.group == "3:4"
    assert call(f, "cond").contexts == []  # in the condition itself
    assert ctx(call(f, "inside")) == [("if", "cond(x)")]


def test_match_arm_with_guard_and_subject():
    f = ex("""
        fn f(m: LoadedModel) {
            match sel(m) {
                LoadedModel::Text(t) if t.big => text_big(t),
                LoadedModel::Text(t) => { text(t) }
                _ => other(),
            }
        }
    """)
    tb, t, o = call(f, "text_big"), call(f, "text"), call(f, "other")
    assert tb.contexts[0].kind == "match_arm"
    assert tb.contexts[0].text == "LoadedModel::Text(t) if t.big"
    assert tb.contexts[0].subject == "sel(m)"
    assert [c.contexts[0].arm for c in (tb, t, o)] == [0, 1, 2]
    assert tb.contexts[0].group == o.contexts[0].group == "3:4"
    assert call(f, "sel").contexts == []


def test_loop_headers_closure_and_nesting_order():
    f = ex("""
        fn f(&self) {
            for layer in &self.layers {
                while let Some(b) = q.pop() {
                    loop { self.items.iter().for_each(|l| step(l)); }
                }
            }
        }
    """)
    s = call(f, "step")
    assert ctx(s) == [
        ("loop", "for layer in &self.layers"),
        ("loop", "while let Some(b) = q.pop()"),
        ("loop", "loop"),
        ("closure", "|l|"),
    ]
    assert all(c.arm == -1 for c in s.contexts)
    assert call(f, "pop").contexts == [s.contexts[0]]  # in the while header, not its body


def test_cfg_on_statement_let_and_match_arm():
    f = ex("""
        fn f() {
            #[cfg(feature = "fp8")]
            fp8_path();
            #[cfg(not(feature = "fp8"))]
            let y = bf16_path();
            plain();
            match k {
                #[cfg(feature = "fa2")]
                Kind::Fa2 => fa2(),
                _ => {}
            }
        }
    """)
    assert ctx(call(f, "fp8_path")) == [("cfg", 'feature = "fp8"')]
    assert ctx(call(f, "bf16_path")) == [("cfg", 'not(feature = "fp8")')]
    assert call(f, "plain").contexts == []
    assert ctx(call(f, "fa2")) == [("cfg", 'feature = "fa2"'), ("match_arm", "Kind::Fa2")]


def test_cfg_on_struct_field_initializer():
    f = ex("""
        fn f() { let x = Foo { #[cfg(feature = "graph")] g: capture(), b: plain() }; }
    """)
    assert ctx(call(f, "capture")) == [("cfg", 'feature = "graph"')]
    assert call(f, "plain").contexts == []


def test_env_on_contexts_direct_and_via_local():
    f = ex("""
        fn f() {
            let use_fp8 = std::env::var("APX_FP8").is_ok();
            let both = use_fp8 && other;
            if use_fp8 { fp8(); } else { bf16(); }
            if env::var_os("APX_DIRECT").is_some() { direct(); }
            if both { second(); }
            if self.use_fp8 { field(); }
        }
        fn g() { if use_fp8 { unrelated(); } }
    """)
    assert call(f, "fp8").contexts[0].env == ["APX_FP8"]
    assert call(f, "bf16").contexts[0].env == ["APX_FP8"]
    assert call(f, "direct").contexts[0].env == ["APX_DIRECT"]
    assert call(f, "second").contexts[0].env == ["APX_FP8"]
    assert call(f, "field").contexts[0].env == []
    assert call(f, "unrelated").contexts[0].env == []


def test_env_via_static_lazy():
    f = ex("""
        static USE_GRAPH: Lazy<bool> = Lazy::new(|| std::env::var("APX_GRAPH").is_ok());
        fn f() { if *USE_GRAPH { capture(); } }
    """)
    assert call(f, "capture").contexts[0].env == ["APX_GRAPH"]


# -- PyO3 ----------------------------------------------------------------------------------------


def test_pyo3_class_methods_function():
    f = ex("""
        #[pyclass(name = "ModelRunner", unsendable)]
        pub struct Runner { inner: Inner }
        #[pymethods]
        impl Runner {
            #[new]
            fn new(path: &str) -> PyResult<Self> { todo!() }
            #[pyo3(name = "run")]
            fn run_py(&mut self) {}
            #[getter]
            fn get_device(&self) -> String { todo!() }
            #[staticmethod]
            fn version() -> u32 { 1 }
        }
        #[pymethods]
        impl Other { fn go(&self) {} }
        #[pyfunction]
        #[pyo3(name = "load_model")]
        fn load(p: &str) {}
    """)
    b = {(x.kind, x.python_name): x for x in f.bindings}
    cls = b[("class", "ModelRunner")]
    assert cls.rust_qualname == "x::a::Runner" and cls.rust_type == "Runner"
    new = b[("method", "new")]
    assert new.attrs == {"constructor": True} and new.python_class == "ModelRunner"
    assert new.rust_qualname == "x::a::Runner::new"
    assert b[("method", "run")].rust_qualname == "x::a::Runner::run_py"
    assert b[("method", "device")].attrs == {"getter": True}
    assert b[("method", "version")].attrs == {"staticmethod": True}
    assert b[("method", "go")].python_class == "Other"  # pyclass not in this file
    assert b[("function", "load_model")].rust_qualname == "x::a::load"


def test_pyo3_module_registrations():
    f = ex("""
        #[pyclass(name = "ModelRunner")]
        struct Runner;
        #[pyfunction]
        fn load() {}
        #[pymodule]
        #[pyo3(name = "apxinf_py")]
        fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
            m.add_class::<Runner>()?;
            m.add_class::<crate::other::Thing>()?;
            m.add_function(wrap_pyfunction!(load, m)?)?;
            m.add_function(wrap_pyfunction!(crate::x::f, m)?)?;
            Ok(())
        }
    """)
    mod = [b for b in f.bindings if b.kind == "module"]
    assert [(b.python_name, b.rust_qualname) for b in mod] == [("apxinf_py", "x::a::native")]
    mem = [(b.python_name, b.rust_qualname, b.python_module, b.attrs["what"]) for b in f.bindings
           if b.kind == "module_member"]  # fmt: skip
    assert mem == [
        ("ModelRunner", "Runner", "apxinf_py", "class"),
        ("Thing", "crate::other::Thing", "apxinf_py", "class"),
        ("load", "load", "apxinf_py", "function"),
        ("f", "crate::x::f", "apxinf_py", "function"),
    ]


def test_pyo3_declarative_module():
    f = ex("""
        #[pyclass]
        struct Foo;
        #[pymodule]
        mod native {
            #[pymodule_export]
            use super::Foo;
            #[pyfunction]
            fn inside() {}
        }
    """)
    b = {(x.kind, x.python_name): x for x in f.bindings}
    assert b[("module", "native")].rust_qualname == "x::a::native"
    foo = b[("module_member", "Foo")]
    assert foo.python_module == "native" and foo.attrs == {"what": "class", "resolved": "x::a::Foo"}
    assert foo.rust_qualname == "super::Foo"
    assert b[("module_member", "inside")].attrs["what"] == "function"


# -- env reads and strings ---------------------------------------------------------------------


def test_env_reads_with_defaults():
    f = ex("""
        const KEY: &str = "APX_KEY";
        fn f() {
            let a = std::env::var("APX_A").unwrap_or("1".into());
            let b = env::var("APX_B").ok().map(|v| v == "1").unwrap_or(false);
            let c = std::env::var_os("APX_C");
            let d = option_env!("APX_D");
            let e = env!("APX_E");
            let k = std::env::var(KEY)?;
            let u = std::env::var(name_from_arg)
                .unwrap_or_default();
        }
    """)
    r = {e.name: e for e in f.env_reads}
    assert r["APX_A"].default == '.unwrap_or("1".into())'
    assert r["APX_A"].caller == "x::a::f" and r["APX_A"].line == 4
    assert r["APX_B"].default == '.ok().map(|v| v == "1").unwrap_or(false)'
    assert r["APX_C"].default == ""
    assert set(r) == {"APX_A", "APX_B", "APX_C", "APX_D", "APX_E", "APX_KEY", "<name_from_arg>"}
    assert r["APX_KEY"].default == "?"
    # not a literal: the expression is kept in <…>; the chain is one-lined without line-break spaces
    assert r["<name_from_arg>"].default == ".unwrap_or_default()"


def test_strings_tensor_names_format_and_const():
    f = ex("""
        const EMBED: &str = "model.embed_tokens.weight";
        fn load(i: usize, prefix: &str) {
            let q = format!("model.layers.{}.self_attn.q_proj.weight", i);
            let d = format!("{prefix}.mlp.down_proj.weight");
            let s = ".weight";
            let skip = "hello world. bye";
            let skip2 = "{}";
            println!("{:?}", x);
        }
    """)
    s = {r["text"]: r for r in f.strings}
    assert set(s) == {
        "model.embed_tokens.weight", "model.layers.{}.self_attn.q_proj.weight",
        "{prefix}.mlp.down_proj.weight", ".weight",
    }  # fmt: skip
    assert (
        s["model.embed_tokens.weight"]["const"] == "EMBED" and s["model.embed_tokens.weight"]["caller"] == ""
    )
    q = s["model.layers.{}.self_attn.q_proj.weight"]
    assert (q["macro"], q["args"], q["caller"], q["line"]) == ("format", ["i"], "x::a::load", 4)
    assert s[".weight"]["macro"] == "" and s["{prefix}.mlp.down_proj.weight"]["args"] == []


# -- robustness --------------------------------------------------------------------------------


def test_syntax_error_keeps_defs_before_and_after():
    f = ex("""
        fn before() { a(); }
        fn broken( { let = ; }
        fn after() { b(); }
    """)
    assert any(i.kind == "syntax" for i in f.issues)
    names = {d.name for d in f.defs}
    assert {"before", "after"} <= names
    assert call(f, "b").caller == "x::a::after"


def test_handler_failure_becomes_issue_not_lost_file(monkeypatch):
    from apxtui.parse import rust

    def boom(self, let):
        raise ValueError("odd let")

    monkeypatch.setattr(rust._Extractor, "_local", boom)
    f = ex("""
        fn f() { let x = 1; g(); }
    """)
    assert [(i.kind, i.line) for i in f.issues] == [("query", 2)]
    assert "odd let" in f.issues[0].message
    assert call(f, "g").caller == "x::a::f"


def test_facts_roundtrip_json():
    f = ex("""
        fn f() { if x { g(); } }
    """)
    again = FileFacts.from_dict(f.to_dict())
    assert again.calls[0].contexts[0].text == "x"


def test_module_level_calls_carry_the_cfg_of_their_item():
    """A call outside any fn (an `include!` in a cfg'd mod, a static's initializer) is under the
    item's `#[cfg]` as a statement's call is; inside a fn, the fn's own cfg is its definition's."""
    f = ex("""
        #[cfg(feature = "cuda")]
        // kernels
        mod k {
            include!(concat!(env!("OUT_DIR"), "/k.rs"));
        }
        #[cfg(feature = "cuda")]
        fn g() { h(); }
    """)
    inc = next(c for c in f.calls if c.callee == "include!")
    assert [(c.kind, c.text) for c in inc.contexts] == [("cfg", 'feature = "cuda"')]
    assert next(c for c in f.calls if c.callee == "h").contexts == []
    assert next(d for d in f.defs if d.name == "g").cfg == ['feature = "cuda"']
