"""candle / cudarc models (queries/frameworks/candle.toml, cudarc.toml; apxtui/index/resolve_frameworks.py)."""

from __future__ import annotations

from helpers import edges_from, graph_of

KERNELS_CU = '''
#define UNARY_OP(TYPENAME, FN_NAME, FUNC) \\
extern "C" __global__ void FN_NAME(const size_t n, const TYPENAME* inp, TYPENAME* out) { out[0] = FUNC; }
UNARY_OP(float, ucopy_f32, inp[0])
UNARY_OP(__nv_bfloat16, ucopy_bf16, inp[0])
UNARY_OP(float, usilu_f32, inp[0])
'''
AFFINE_CU = '''
extern "C" __global__ void affine_f32(const float* x, float* y) {}
extern "C" __global__ void affine_bf16(const __nv_bfloat16* x, __nv_bfloat16* y) {}
extern "C" __global__ void affine_u8(const unsigned char* x, unsigned char* y) {}
'''
BACKEND_RS = '''
use crate::kernels;
pub fn kernel_name<T: WithDType>(root: &str) -> String {
    let dtype = T::DTYPE.as_str();
    format!("{root}_{dtype}")
}
pub trait Map1 {
    fn f<T: DeviceRepr>(&self, src: &CudaSlice<T>, dev: &CudaDevice, layout: &Layout) -> Result<CudaSlice<T>>;
    fn map(&self, s: &S, d: &CudaDevice, l: &Layout) -> Result<S> { Ok(s) }
}
pub trait Map2 {
    fn f<T: DeviceRepr>(&self, a: &CudaSlice<T>, b: &CudaSlice<T>, dev: &CudaDevice) -> Result<CudaSlice<T>>;
    fn map(&self, a: &S, b: &S, d: &CudaDevice) -> Result<S> { Ok(a) }
}
struct Affine(f64, f64);
impl Map1 for Affine {
    fn f<T: DeviceRepr + WithDType>(&self, src: &CudaSlice<T>, dev: &CudaDevice, layout: &Layout)
        -> Result<CudaSlice<T>> {
        let func = dev.get_or_load_func(&kernel_name::<T>("affine"), &kernels::AFFINE)?;
        unsafe { func.builder().launch(cfg) }?;
        Ok(out)
    }
}
struct Copy2;
impl Map2 for Copy2 {
    fn f<T: DeviceRepr>(&self, a: &CudaSlice<T>, b: &CudaSlice<T>, dev: &CudaDevice) -> Result<CudaSlice<T>> {
        let func = dev.get_or_load_func("ucopy_bf16", &kernels::UNARY)?;
        Ok(out)
    }
}
pub struct CudaStorage { slice: S, device: CudaDevice }
impl CudaStorage {
    pub fn affine(&self, layout: &Layout, mul: f64, add: f64) -> Result<Self> {
        let slice = Affine(mul, add).map(&self.slice, &self.device, layout)?;
        Ok(slice)
    }
    pub fn copy2(&self, other: &Self) -> Result<Self> {
        let slice = Copy2.map(&self.slice, &other.slice, &self.device)?;
        Ok(slice)
    }
    pub fn matmul(&self) -> Result<Self> {
        unsafe { cudarc::cublas::result::gemm_strided_batched_ex(handle, a, b) }?;
        let blas = cudarc::cublas::CudaBlas::new(stream.clone())?;
        Ok(x)
    }
}
'''
OPS_RS = '''
pub trait CustomOp1 {
    fn name(&self) -> &'static str;
    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)>;
    fn cuda_fwd(&self, s: &CudaStorage, l: &Layout) -> Result<(CudaStorage, Shape)> { todo() }
}
struct Sigmoid;
impl CustomOp1 for Sigmoid {
    fn name(&self) -> &'static str { "sigmoid" }
    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> { cpu_sigmoid(s) }
    fn cuda_fwd(&self, s: &CudaStorage, l: &Layout) -> Result<(CudaStorage, Shape)> {
        let func = s.device().get_or_load_func(&kernel_name::<f32>("usilu"), &kernels::UNARY)?;
        Ok(x)
    }
}
pub struct Tensor;
impl Tensor {
    pub fn apply_op1<C: CustomOp1>(&self, c: C) -> Result<Tensor> { Ok(Tensor) }
}
fn cpu_sigmoid(s: &CpuStorage) -> Result<(CpuStorage, Shape)> { todo() }
pub fn sigmoid(xs: &Tensor) -> Result<Tensor> {
    xs.apply_op1(Sigmoid)
}
'''


def _graph():
    return graph_of({
        "k/src/unary.cu": ("", KERNELS_CU), "k/src/affine.cu": ("", AFFINE_CU),
        "core/src/backend.rs": ("core::backend", BACKEND_RS), "core/src/ops.rs": ("core::ops", OPS_RS),
    })


def test_get_or_load_func_with_a_literal_is_an_exact_launch_in_the_named_module():
    g, _ = _graph()
    got = [(t["qualname"], d["resolution"]) for t, d in edges_from(g, "Copy2::f", "launch")]
    assert got == [("ucopy_bf16", "exact")]
    how = edges_from(g, "Copy2::f", "launch")[0][1]["how"]
    assert 'loaded by name "ucopy_bf16"' in how and "module UNARY (k/src/unary.cu)" in how


def test_kernel_name_with_a_type_suffix_lists_every_matching_kernel_as_heuristic():
    g, _ = _graph()
    got = sorted((t["qualname"], d["resolution"], d["attrs"].get("by_name", "")) for t, d in
                 edges_from(g, "Affine::f", "launch"))
    assert [x[:2] for x in got] == [("affine_bf16", "heuristic"), ("affine_f32", "heuristic"),
                                   ("affine_u8", "heuristic")]
    assert got[0][2].startswith("kernel_name::<T>(\"affine\")")
    # the method call itself still links to the loader
    assert any(t["name"] == "kernel_name" for t, _ in edges_from(g, "Affine::f", "call"))


def test_map_impl_map_call_runs_its_f():
    g, _ = _graph()
    calls = {t["qualname"]: d for t, d in edges_from(g, "CudaStorage::affine", "call")}
    assert "core::backend::Affine::f" in calls and calls["core::backend::Affine::f"]["resolution"] == "exact"
    calls2 = {t["qualname"] for t, d in edges_from(g, "CudaStorage::copy2", "call")}
    assert "core::backend::Copy2::f" in calls2


def test_apply_op1_with_a_typed_op_is_a_device_dispatch_of_its_forwards():
    from apxtui.trace import Tracer

    g, _ = _graph()
    calls = sorted((t["qualname"], [c["text"] for c in d["conditions"]]) for t, d in edges_from(g, "ops::sigmoid"))
    assert calls == [("core::ops::Sigmoid::cpu_fwd", ["device cpu"]), ("core::ops::Sigmoid::cuda_fwd", ["device cuda"])]
    root = next(n for n, d in g.nodes(data=True) if d.get("qualname") == "core::ops::sigmoid")
    tree = Tracer(g, select=["cuda"]).trace(root)
    arm = [a for a in tree.children[0].arms if a.selected][0]
    fwd = arm.children[0]
    assert fwd.qualname == "core::ops::Sigmoid::cuda_fwd"
    assert [c.name for c in fwd.children if c.kind == "kernel"] == ["usilu_f32"]


def test_cudarc_cublas_call_is_a_library_call():
    g, _ = _graph()
    vend = [(t["kind"], t["qualname"], t.get("library"), d["kind"]) for t, d in edges_from(g, "CudaStorage::matmul")]
    assert ("vendor_api", "cublasGemmStridedBatchedEx", "cublas", "vendor") in vend
    # an unmapped constructor keeps its type: a bare `new` would read as the project's own `new`s
    assert ("vendor_api", "CudaBlas::new", "cublas", "vendor") in vend


def test_kernels_report_lists_pattern_only_kernels_apart_from_unreached(tmp_path):
    from helpers import build_isolated

    from apxtui.analysis.checkout import kernels_report
    from apxtui.commands.kernels import render

    for rel, src in {"k/src/unary.cu": KERNELS_CU, "k/src/affine.cu": AFFINE_CU, "core/src/backend.rs": BACKEND_RS,
                     "core/src/ops.rs": OPS_RS, "core/src/lib.rs": "pub mod backend;\npub mod ops;\n",
                     "core/Cargo.toml": '[package]\nname = "core"\n'}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(src)
    rep = kernels_report(build_isolated(tmp_path, tmp_path / "cache"))
    assert {u.name for u in rep.unreached} == {"ucopy_f32"}
    pattern = {u.name: u for u in rep.reached_by_name_pattern_only}
    assert set(pattern) == {"affine_f32", "affine_bf16", "affine_u8"}  # usilu_f32: kernel_name::<f32>, exact
    assert (pattern["affine_u8"].patterns or ("",))[0].startswith('kernel_name::<T>("affine")')
    assert {k.kernel for k in rep.kernels if k.by_name_pattern_only} == set(pattern)
    text = render(rep, False)
    assert "not reached (no edge of any kind): 1" in text
    assert "reached only by name patterns (heuristic): 3" in text


TENSOR_RS = '''
macro_rules! unary_op {
    ($fn_name:ident, $op_name:ident) => {
        pub fn $fn_name(&self) -> Result<Self> {
            let storage = self.storage().unary_impl::<crate::op::$op_name>(self.layout())?;
            Ok(from_storage(storage))
        }
    };
}
macro_rules! many {
    ($($name:ident),*) => { $(fn $name() {})* };
}
pub struct Tensor;
pub struct Storage;
impl Storage {
    pub fn unary_impl<B: UnaryOpT>(&self, l: &Layout) -> Result<Self> { Ok(Storage) }
}
impl Tensor {
    fn storage(&self) -> Storage { Storage }
    unary_op!(silu, Silu);
    unary_op!(exp, Exp);
    many!(a, b);
}
pub fn act(t: &Tensor) -> Result<Tensor> {
    t.silu()
}
'''


def test_macro_rules_generating_methods_produce_symbols():
    g, _ = graph_of({"core/src/tensor.rs": ("core::tensor", TENSOR_RS)})
    methods = {d["qualname"]: d for _, d in g.nodes(data=True) if d.get("kind") == "rust_fn"}
    assert "core::tensor::Tensor::silu" in methods and "core::tensor::Tensor::exp" in methods
    assert methods["core::tensor::Tensor::silu"]["line"] == 20  # the invocation
    assert "core::tensor::Tensor::a" not in methods  # a rule with a repetition: not expanded
    calls = [(t["qualname"], d["resolution"]) for t, d in edges_from(g, "tensor::act", "call")]
    assert calls == [("core::tensor::Tensor::silu", "exact")]
    inner = {t["qualname"] for t, d in edges_from(g, "Tensor::silu", "call")}
    assert "core::tensor::Storage::unary_impl" in inner


def test_map_never_links_another_modules_type_of_the_same_name():
    """cpu_backend's `Cmp` implements a trait the model does not list: not cuda_backend's `Cmp::f`."""
    cuda = '''
pub trait Map2Any { fn f(&self, a: &S) -> Result<S>; fn map(&self, a: &S) -> Result<S> { self.f(a) } }
struct Cmp(u8);
impl Map2Any for Cmp { fn f(&self, a: &S) -> Result<S> { Ok(a) } }
'''
    cpu = '''
pub trait Map2Own { fn f(&self, a: &S) -> Result<S>; fn map(&self, a: &S) -> Result<S> { self.f(a) } }
struct Cmp(u8);
impl Map2Own for Cmp { fn f(&self, a: &S) -> Result<S> { Ok(a) } }
pub struct CpuStorage;
impl CpuStorage {
    pub fn cmp(&self, a: &S) -> Result<S> { Cmp(0).map(a) }
}
'''
    g, _ = graph_of({"src/cuda_backend.rs": ("core::cuda_backend", cuda),
                     "src/cpu_backend.rs": ("core::cpu_backend", cpu)})
    targets = [t["qualname"] for t, _ in edges_from(g, "CpuStorage::cmp", "call")]
    assert "core::cuda_backend::Cmp::f" not in targets


def test_map_on_a_type_path_or_an_imported_type_is_resolved_in_the_callers_scope():
    """`super::Affine(..).map` in a submodule, `Conv2D(..).map` with `use conv2d::Conv2D`: that type's
    `f`, exact — not every type of that name in the checkout."""
    traits = "pub trait Map1 { fn f(&self, a: &S) -> Result<S>; fn map(&self, a: &S) -> Result<S> { self.f(a) } }\n"
    one = ("use crate::utils::Map1;\npub struct Affine(f64);\n"
           "impl Map1 for Affine { fn f(&self, a: &S) -> Result<S> { Ok(a) } }\n")
    files = {
        "src/utils.rs": ("core::utils", traits),
        "src/cuda/mod.rs": ("core::cuda", one + "pub mod device;\n"),
        "src/cuda/device.rs": ("core::cuda::device", "use crate::utils::Map1;\n"
                               "pub fn rand(a: &S) -> Result<S> { super::Affine(1.0).map(a) }\n"),
        "src/cpu/mod.rs": ("core::cpu", one + "mod conv;\nuse conv::Conv2D;\n"
                           "pub fn conv2d(a: &S) -> Result<S> { Conv2D(1).map(a) }\n"),
        "src/cpu/conv.rs": ("core::cpu::conv", "use crate::utils::Map1;\npub(super) struct Conv2D(pub(super) u8);\n"
                            "impl Map1 for Conv2D { fn f(&self, a: &S) -> Result<S> { Ok(a) } }\n"),
        "src/cuda/conv.rs": ("core::cuda::conv", "use crate::utils::Map1;\npub struct Conv2D(u8);\n"
                             "impl Map1 for Conv2D { fn f(&self, a: &S) -> Result<S> { Ok(a) } }\n"),
    }
    g, _ = graph_of(files)
    got = sorted((t["qualname"], d["resolution"]) for t, d in edges_from(g, "device::rand", "call")
                 if t["qualname"].endswith("::f"))
    assert got == [("core::cuda::Affine::f", "exact")]
    got = sorted((t["qualname"], d["resolution"]) for t, d in edges_from(g, "cpu::conv2d", "call")
                 if t["qualname"].endswith("::f"))
    assert got == [("core::cpu::conv::Conv2D::f", "exact")]


def test_rust_expansion_key_reads_only_the_macros_the_file_invokes():
    """An expanded record's key covers the ``macro_rules!`` of the names its item-level invocations
    use: another macro moving does not re-expand the file; its own macro's edit does."""
    from apxtui.index.expanded import macro_signature
    from apxtui.index.factstore import rust_item_macros
    from apxtui.index.macros import Visible
    from apxtui.parse import extract_file

    other = "macro_rules! other { ($x:ident) => { fn $x() {} }; }\n"

    def sig(tensor: str, other_src: str) -> str:
        facts = {"src/tensor.rs": extract_file("src/tensor.rs", tensor.encode(), "rust", "core::tensor"),
                 "src/other.rs": extract_file("src/other.rs", other_src.encode(), "rust", "core::other")}
        names = rust_item_macros(facts["src/tensor.rs"])
        assert names == ["many", "unary_op"]
        return macro_signature("src/tensor.rs", "rust", Visible(facts, set(facts)), names)

    base = sig(TENSOR_RS, other)
    assert sig(TENSOR_RS, "\n\n" + other) == base  # an unrelated macro moved
    assert sig(TENSOR_RS, other + "macro_rules! unary_op { () => {}; }\n") != base  # a second `unary_op!`
    assert sig(TENSOR_RS.replace("Ok(from_storage", "Ok(into_storage"), other) != base  # its own macro edited


PARAM_RS = '''
use crate::kernels;
fn launch_unary(dev: &CudaDevice, name: &str, n: usize) -> Result<()> {
    let func = dev.get_or_load_func(name, &kernels::UNARY)?;
    Ok(())
}
pub fn copy(dev: &CudaDevice) -> Result<()> { launch_unary(dev, "ucopy_f32", 4) }
pub fn silu(dev: &CudaDevice) -> Result<()> { launch_unary(dev, &format!("usilu_{}", "f32"), 4) }
pub struct Dev;
impl Dev {
    pub fn get_or_load_func(&self, fn_name: &str, mdl: &Module) -> Result<CudaFunc> {
        let func = mdl.load_function(fn_name)?;
        Ok(func)
    }
}
'''


def test_a_kernel_name_passed_as_a_parameter_is_what_the_callers_pass():
    g, _ = graph_of({"k/src/unary.cu": ("", KERNELS_CU), "core/src/param.rs": ("core::param", PARAM_RS)})
    got = sorted((t["qualname"], d["resolution"]) for t, d in edges_from(g, "param::launch_unary", "launch"))
    # every kernel a caller names, heuristic (which caller ran is not known at the loading site)
    assert got == [("ucopy_f32", "heuristic"), ("usilu_f32", "heuristic")]
    how = edges_from(g, "param::launch_unary", "launch")[0][1]["how"]
    assert "`name`, a parameter of launch_unary: what its callers in this file pass (core/src/param.rs:7, " \
           "core/src/param.rs:8)" in how
    # inside the modelled loader itself the name is left to its callers' sites (linked there)
    assert edges_from(g, "param::Dev::get_or_load_func", "launch") == []


def test_loading_by_name_reads_the_kernels_table_not_every_definition():
    """A re-link reads the stored tables key by key: matching a name pattern must not list every
    definition (``Tables.kernels``: link name → ids)."""
    from apxtui.facts import CallSite
    from apxtui.index.resolve_frameworks import Frameworks
    from apxtui.index.resolve_rust import RustResolver
    from apxtui.index.tables import Tables
    from apxtui.parse import extract_file

    class Keyed(dict):  # a table that answers key by key only, as StoredTables does cheaply
        def items(self):
            raise AssertionError("every definition read")

        values = keys = __iter__ = items

    t = Tables()
    t.add_file(extract_file("k/src/affine.cu", AFFINE_CU.encode(), "cuda", ""))
    assert sorted(t.kernels) == ["affine_bf16", "affine_f32", "affine_u8"]
    rust = RustResolver(t)  # (a re-link passes it the stored indexes)
    t.defs = Keyed(t.defs)
    fw = Frameworks(t, rust)
    call = CallSite("method", "get_or_load_func", ["get_or_load_func"], "f", "a.rs", 3, 0,
                    args=['&format!("affine_{}", d)', "&kernels::AFFINE"])
    got = sorted((x.target.split("@")[0], x.resolution) for x in fw.load_by_name(call, None))
    assert got == [("affine_bf16", "heuristic"), ("affine_f32", "heuristic"), ("affine_u8", "heuristic")]
