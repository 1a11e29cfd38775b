"""Function pointers as dispatch points (apxtui/index/resolve_fnptr.py)."""

from __future__ import annotations

from helpers import edges_from, graph_of

from apxtui.trace import Tracer

PICKER = r'''
typedef void (*fp_t)(const half*);
template <bool first, int m> __global__ void gemm_2bit(const half* a) {}
template <bool first, int m> __global__ void gemm_4bit(const half* a) {}
fp_t pick_gemm(bool first, const int m_count, const int bit) {
#define SELECT_KERNEL(M_COUNT)                      \
  if (m_count == M_COUNT) {                         \
    if (bit == 2) return gemm_2bit<true, M_COUNT>;  \
    if (bit == 4) return gemm_4bit<true, M_COUNT>;  \
  }
#if BLOCK_M_SIZE_MAX >= 1
  SELECT_KERNEL(1);
#endif
  SELECT_KERNEL(2);
  return NULL;
}
extern "C" void gemm_part(const half* a, int m_count, int bit) {
  fp_t kernel = pick_gemm(true, m_count, bit);
  kernel<<<1, 128, 0>>>(a);
}
'''


def _root(g, qual):
    return next(n for n, d in g.nodes(data=True) if d.get("qualname") == qual)


def test_picker_returning_a_kernel_pointer_is_a_dispatch_of_launches():
    g, _ = graph_of({"k/q_gemm.cu": ("", PICKER)})
    launches = [(t["qualname"], tuple(d["template_args"]), [c["text"] for c in d["conditions"]], d["resolution"])
                for t, d in edges_from(g, "gemm_part", "launch")]
    assert sorted(launches) == [
        ("gemm_2bit", ("true", "1"), ["BLOCK_M_SIZE_MAX >= 1", "m_count == 1", "bit == 2"], "exact"),
        ("gemm_2bit", ("true", "2"), ["m_count == 2", "bit == 2"], "exact"),
        ("gemm_4bit", ("true", "1"), ["BLOCK_M_SIZE_MAX >= 1", "m_count == 1", "bit == 4"], "exact"),
        ("gemm_4bit", ("true", "2"), ["m_count == 2", "bit == 4"], "exact"),
    ]
    how = next(d["how"] for t, d in edges_from(g, "gemm_part", "launch"))
    assert "returned by pick_gemm at k/q_gemm.cu:" in how and "(macro SELECT_KERNEL)" in how
    tree = Tracer(g).trace(_root(g, "gemm_part"))
    kinds = [type(c).__name__ for c in tree.children]
    # the call to the picker, then its branches: `#if` around SELECT_KERNEL(1), `if` of SELECT_KERNEL(2)
    assert kinds == ["Stage", "Dispatch", "Dispatch"] and tree.children[0].name == "pick_gemm"
    assert [d.construct for d in tree.children[1:]] == ["pp_if", "if"]
    from apxtui.trace import walk

    kernels = sorted({st.name for _, st, _ in walk(tree) if st.kind == "kernel"})
    assert kernels == ["gemm_2bit", "gemm_4bit"]


FFI = '''
extern "C" {
    pub fn paged_attention_v1_f16(out: *const f32, n: i32);
    pub fn paged_attention_v1_bf16(out: *const f32, n: i32);
    pub fn launch_q4_0_plain(x: *const f32);
    pub fn launch_q8_0_plain(x: *const f32);
}
'''

PLAIN_LAUNCHER = '''\
fn plain_launcher(dtype: GgmlDType) -> Option<PlainLauncher> {
    let f: PlainLauncher = match dtype {
        GgmlDType::Q4_0 => ffi::launch_q4_0_plain,
        GgmlDType::Q8_0 => ffi::launch_q8_0_plain,
        _ => return None,
    };
    Some(f)
}
'''

RUST = '''
use crate::ffi::{paged_attention_v1_bf16, paged_attention_v1_f16};
use crate::ffi;
pub type PlainLauncher = unsafe extern "C" fn(*const f32);

''' + PLAIN_LAUNCHER + '''
pub fn forward(dtype: DType, w: GgmlDType, x: *const f32) -> Result<()> {
    let paged_attention_v1_func = match dtype {
        DType::F16 => paged_attention_v1_f16,
        DType::BF16 => paged_attention_v1_bf16,
        dtype => candle::bail!("dtype {dtype:?} is not supported"),
    };
    unsafe { paged_attention_v1_func(x, 4) }
    let launcher = plain_launcher(w).unwrap();
    unsafe { launcher(x) };
    Ok(())
}
'''

CU = '''
extern "C" void paged_attention_v1_f16(const float* out, int n) {}
extern "C" void paged_attention_v1_bf16(const float* out, int n) {}
extern "C" void launch_q4_0_plain(const float* x) {}
extern "C" void launch_q8_0_plain(const float* x) {}
'''


def test_rust_match_choosing_an_extern_function_then_called_through_the_variable():
    g, _ = graph_of({"src/ffi.rs": ("pa::ffi", FFI), "src/lib.rs": ("pa", RUST), "k/pa.cu": ("", CU)})
    calls = [(t["qualname"], t["kind"], [c["text"] for c in d["conditions"]], d["resolution"])
             for t, d in edges_from(g, "pa::forward", "call")]
    assert ("pa::ffi::paged_attention_v1_f16", "ffi_decl", ["DType::F16"], "exact") in calls
    assert ("pa::ffi::paged_attention_v1_bf16", "ffi_decl", ["DType::BF16"], "exact") in calls
    # through a picker's return value
    assert ("pa::ffi::launch_q4_0_plain", "ffi_decl", ["GgmlDType::Q4_0"], "exact") in calls
    assert ("pa::ffi::launch_q8_0_plain", "ffi_decl", ["GgmlDType::Q8_0"], "exact") in calls
    assert not [c for c in calls if c[0] in ("paged_attention_v1_func", "launcher")]
    tree = Tracer(g, select=["BF16"]).trace(_root(g, "pa::forward"))
    disp = [c for c in tree.children if type(c).__name__ == "Dispatch"]
    assert [a.label for a in disp[0].arms] == ["DType::F16", "DType::BF16", "other arms (no call)"]
    chosen = [a for a in disp[0].arms if a.selected][0].children[0]
    assert chosen.qualname == "pa::ffi::paged_attention_v1_bf16"
    assert chosen.children[0].kind == "abi_fn"  # declaration → definition by symbol


RUST2 = '''
use crate::ffi;
fn reduce<T>(n: i32, launch: unsafe extern "C" fn(*const f32), name: &str) { unsafe { launch(x) } }
pub fn shadowed(dtype: DType, use_a: bool, x: *const f32) {
    let f = match dtype { DType::F16 => ffi::paged_attention_v1_f16, _ => return };
    unsafe { f(x, 1) };
    let f = if use_a { ffi::launch_q4_0_plain } else { ffi::launch_q8_0_plain };
    unsafe { f(x) };
    reduce::<f32>(4, ffi::launch_q8_0_plain, "q8");
}
'''


def test_rust_shadowed_function_variables_if_values_and_functions_passed_as_arguments():
    g, _ = graph_of({"src/ffi.rs": ("pa::ffi", FFI), "src/lib.rs": ("pa", RUST2), "k/pa.cu": ("", CU)})
    calls = sorted((d["line"], t["qualname"].split("::")[-1], [c["text"] for c in d["conditions"]], d["resolution"])
                   for t, d in edges_from(g, "pa::shadowed", "call") if t["kind"] == "ffi_decl")
    assert calls == [(6, "paged_attention_v1_f16", ["DType::F16"], "exact"),
                     (8, "launch_q4_0_plain", ["use_a"], "exact"), (8, "launch_q8_0_plain", ["else"], "exact"),
                     (9, "launch_q8_0_plain", [], "heuristic")]


def test_a_kernel_variable_assigned_several_kernels_is_a_dispatch():
    src = r'''
__global__ void alt_4bit(const half* a) {}
__global__ void alt_8bit(const half* a) {}
extern "C" void gemm_alt(const half* a, int bit) {
  auto kernel = alt_4bit;
  if (bit == 8) {
    kernel = alt_8bit;
  }
  kernel<<<1, 128, 0>>>(a);
}
'''
    g, _ = graph_of({"k/q.cu": ("", src)})
    got = sorted((t["qualname"], [c["text"] for c in d["conditions"]], d["resolution"])
                 for t, d in edges_from(g, "gemm_alt", "launch"))
    assert got == [("alt_4bit", ["kernel = alt_4bit"], "exact"), ("alt_8bit", ["kernel = alt_8bit"], "exact")]


def test_extern_function_passed_to_a_local_macro_and_a_tail_match_picker():
    src = '''
use crate::ffi;
type L = unsafe extern "C" fn(*const f32);
fn quantize_launcher(layout: Layout) -> L {
    match layout {
        Layout::D4 => ffi::launch_q4_0_plain,
        Layout::DS4 => ffi::launch_q8_0_plain,
    }
}
pub fn run(dtype: DType, layout: Layout, x: *const f32) {
    macro_rules! launch {
        ($ffi_fn:ident) => {{ unsafe { ffi::$ffi_fn(x, 1) } }};
    }
    match dtype {
        DType::F16 => launch!(paged_attention_v1_f16),
        _ => {}
    }
    let q = quantize_launcher(layout);
    unsafe { q(x) };
}
'''
    g, _ = graph_of({"src/ffi.rs": ("pa::ffi", FFI), "src/lib.rs": ("pa", src), "k/pa.cu": ("", CU)})
    got = sorted((t["qualname"].split("::")[-1], [c["text"] for c in d["conditions"]], d["resolution"])
                 for t, d in edges_from(g, "pa::run", "call") if t["kind"] == "ffi_decl")
    assert got == [("launch_q4_0_plain", ["Layout::D4"], "exact"), ("launch_q8_0_plain", ["Layout::DS4"], "exact"),
                   ("paged_attention_v1_f16", ["DType::F16"], "heuristic")]


def test_a_picked_kernel_defined_twice_is_ambiguous_with_every_candidate_at_one_site():
    pick = r'''
typedef void (*fp_t)(const half*);
fp_t pick(int bit) {
  if (bit == 4) return k_dup;
  return k_one;
}
extern "C" void run(const half* a, int bit) {
  fp_t kernel = pick(bit);
  kernel<<<1, 32, 0>>>(a);
}
'''
    g, _ = graph_of({"k/pick.cu": ("", pick), "k/a.cu": ("", "__global__ void k_dup(const half* a) {}\n"),
                     "k/b.cu": ("", "__global__ void k_dup(const half* a) {}\n"),
                     "k/c.cu": ("", "__global__ void k_one(const half* a) {}\n")})
    got = sorted((t["file"], d["resolution"], d["site"]) for t, d in edges_from(g, "run", "launch"))
    dup = [x for x in got if x[0] in ("k/a.cu", "k/b.cu")]
    assert [x[1] for x in dup] == ["ambiguous", "ambiguous"]  # never one of them picked, never exact
    assert dup[0][2] == dup[1][2]  # one site: the two candidates of one arm
    assert [x[:2] for x in got if x[0] == "k/c.cu"] == [("k/c.cu", "exact")]


RUST_FIELD = '''
use crate::ffi;
type PlainLauncher = unsafe extern "C" fn(*const f32);

''' + PLAIN_LAUNCHER + '''
struct Run {
    launcher: PlainLauncher,
    n: usize,
}

impl Run {
    fn launch(&self, x: *const f32) {
        unsafe { (self.launcher)(x) }
    }
}

pub fn forward(w: GgmlDType, x: *const f32) {
    let run = Run { launcher: plain_launcher(w).expect("checked"), n: 1 };
    run.launch(x);
}
'''


def test_rust_function_pointer_stored_in_a_struct_field_then_called_through_it():
    files = {"src/ffi.rs": ("pa::ffi", FFI), "src/lib.rs": ("pa", RUST_FIELD), "k/pa.cu": ("", CU)}
    g, _ = graph_of(files)
    calls = sorted((t["qualname"], [c["text"] for c in d["conditions"]], d["resolution"])
                   for t, d in edges_from(g, "pa::Run::launch", "call"))
    # the struct is private to the file, so every literal setting the field is seen: the arms stay exact
    assert calls == [("pa::ffi::launch_q4_0_plain", ["GgmlDType::Q4_0"], "exact"),
                     ("pa::ffi::launch_q8_0_plain", ["GgmlDType::Q8_0"], "exact")]
    how = next(d["how"] for _, d in edges_from(g, "pa::Run::launch", "call"))
    assert "returned by pa::plain_launcher" in how and "stored in field `launcher` of Run at src/lib.rs:26" in how
    # a public struct may be built in another file too: heuristic
    g, _ = graph_of({**files, "src/lib.rs": ("pa", RUST_FIELD.replace("struct Run", "pub struct Run"))})
    assert {d["resolution"] for _, d in edges_from(g, "pa::Run::launch", "call")} == {"heuristic"}


RUST_CHAIN = '''
use crate::ffi;
pub fn chain(prefill: bool, m: i32, x: *const f32) {
    let f = if prefill {
        ffi::launch_q4_0_plain
    } else if m <= 8 {
        ffi::launch_q8_0_plain
    } else {
        ffi::paged_attention_v1_f16
    };
    unsafe { f(x) };
}
pub fn local_macro(dtype: DType, x: *const f32) {
    macro_rules! launch {
        ($ty:ty) => {{
            let y = x as *const $ty;
            unsafe { ffi::launch_q8_0_plain(y) }
        }};
    }
    match dtype {
        DType::BF16 => launch!(half::bf16),
        _ => launch!(f32),
    }
}
'''


def test_rust_else_if_chain_of_function_values_and_extern_calls_in_a_local_macro_body():
    g, _ = graph_of({"src/ffi.rs": ("pa::ffi", FFI), "src/lib.rs": ("pa", RUST_CHAIN), "k/pa.cu": ("", CU)})
    calls = sorted((t["qualname"].split("::")[-1], [c["text"] for c in d["conditions"]], d["resolution"])
                   for t, d in edges_from(g, "pa::chain", "call") if t["kind"] == "ffi_decl")
    assert calls == [("launch_q4_0_plain", ["prefill"], "exact"), ("launch_q8_0_plain", ["m <= 8"], "exact"),
                     ("paged_attention_v1_f16", ["else"], "exact")]
    neg = {t["qualname"].split("::")[-1]: d["conditions"][-1].get("negated")
           for t, d in edges_from(g, "pa::chain", "call") if t["kind"] == "ffi_decl"}
    assert neg["launch_q8_0_plain"] == ["prefill"] and neg["paged_attention_v1_f16"] == ["prefill", "m <= 8"]
    # the macro's one rule calls the extern function: each invocation, under its own arm, calls it
    calls = sorted((d["line"], [c["text"] for c in d["conditions"]], d["resolution"])
                   for t, d in edges_from(g, "pa::local_macro", "call") if t["kind"] == "ffi_decl")
    assert calls == [(21, ["DType::BF16"], "exact"), (22, ["_"], "exact")]


def test_a_kernel_taken_from_a_local_table_is_a_dispatch_over_its_entries():
    src = r'''
typedef void (*fp_t)(const float*);
__global__ void k_a(const float* x) {}
template <int N> __global__ void k_b(const float* x) {}
void run(const float* x, int i) {
  static const fp_t kernels[] = {k_a, k_b<4>, &k_b<8>};
  kernels[i]<<<1, 32>>>(x);
}
void unknown(const float* x, int i, fp_t* t) { t[i]<<<1, 32>>>(x); }
'''
    g, _ = graph_of({"k/t.cu": ("", src)})
    got = sorted((t["qualname"], tuple(d["template_args"]), d["resolution"]) for t, d in edges_from(g, "run", "launch"))
    assert got == [("k_a", (), "exact"), ("k_b", ("4",), "exact"), ("k_b", ("8",), "exact")]
    assert {c["subject"] for _, d in edges_from(g, "run", "launch") for c in d["conditions"]} == {"kernels[…]"}
    # a table the function does not fill stays an unresolved launch, named as written
    assert [t["qualname"] for t, _ in edges_from(g, "unknown", "launch")] == ["t[i]"]


def test_rust_extern_function_taken_from_a_local_table():
    src = '''
use crate::ffi;
pub fn tabled(i: usize, x: *const f32) {
    let table = [ffi::launch_q4_0_plain, ffi::launch_q8_0_plain];
    unsafe { table[i](x) };
}
'''
    g, _ = graph_of({"src/ffi.rs": ("pa::ffi", FFI), "src/lib.rs": ("pa", src), "k/pa.cu": ("", CU)})
    calls = sorted((t["qualname"].split("::")[-1], [c["text"] for c in d["conditions"]], d["resolution"])
                   for t, d in edges_from(g, "pa::tabled", "call") if t["kind"] == "ffi_decl")
    assert calls == [("launch_q4_0_plain", ["table[0]"], "exact"), ("launch_q8_0_plain", ["table[1]"], "exact")]
