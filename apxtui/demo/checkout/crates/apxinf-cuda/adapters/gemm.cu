// Copyright 2026 apxinf contributors.
// C ABI for dense projections through cuBLASLt. Row-major out[m, n] = x[m, k] * w[n, k]^T
// is computed as the column-major product out^T = w * x^T (w transposed).

#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cublasLt.h>
#include <map>
#include <tuple>
#if defined(APXINF_ENABLE_FP8)
#include <cuda_fp8.h>
#endif

namespace {
cublasLtHandle_t lt_handle() {
    static cublasLtHandle_t handle = nullptr;
    if (handle == nullptr) {
        cublasLtCreate(&handle);
    }
    return handle;
}

// The algorithm for one (m, n, k), chosen on the first call for that shape: a heuristic query and an
// AlgoCheck (setup: validates the algorithm, computes nothing), cached in a std::map.
std::map<std::tuple<int, int, int>, cublasLtMatmulAlgo_t> g_algos;

const cublasLtMatmulAlgo_t* algo_for(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
                                     cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, int m, int n, int k) {
    const auto key = std::make_tuple(m, n, k);
    auto it = g_algos.find(key);
    if (it == g_algos.end()) {
        cublasLtMatmulPreference_t pref = nullptr;
        cublasLtMatmulPreferenceCreate(&pref);
        cublasLtMatmulHeuristicResult_t result = {};
        int found = 0;
        cublasLtMatmulAlgoGetHeuristic(handle, desc, a, b, c, c, pref, 1, &result, &found);
        cublasLtMatmulHeuristicResult_t checked = {};
        cublasLtMatmulAlgoCheck(handle, desc, a, b, c, c, &result.algo, &checked);
        cublasLtMatmulPreferenceDestroy(pref);
        it = g_algos.emplace(key, result.algo).first;
    }
    return &it->second;
}
}  // namespace

extern "C" int apxinf_cublaslt_gemm_bf16(const void* x, const void* w, void* out, int m, int n, int k,
                                         cudaStream_t stream) {
    cublasLtHandle_t handle = lt_handle();
    cudaDataType_t ab_type = CUDA_R_16BF;
    cudaDataType_t c_type = CUDA_R_16BF;
    cublasComputeType_t compute = CUBLAS_COMPUTE_32F;

    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F);
    const cublasOperation_t trans_a = CUBLAS_OP_T;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof(trans_a));

    cublasLtMatrixLayout_t a_layout = nullptr, b_layout = nullptr, c_layout = nullptr;
    cublasLtMatrixLayoutCreate(&a_layout, ab_type, k, n, k);
    cublasLtMatrixLayoutCreate(&b_layout, ab_type, k, m, k);
    cublasLtMatrixLayoutCreate(&c_layout, c_type, n, m, n);

    const float alpha = 1.0f;
    const float beta = 0.0f;
    const cublasLtMatmulAlgo_t* algo = algo_for(handle, desc, a_layout, b_layout, c_layout, m, n, k);
    const cublasStatus_t status = cublasLtMatmul(handle, desc, &alpha, w, a_layout, x, b_layout, &beta, out, c_layout,
                                                 out, c_layout, algo, nullptr, 0, stream);

    cublasLtMatrixLayoutDestroy(c_layout);
    cublasLtMatrixLayoutDestroy(b_layout);
    cublasLtMatrixLayoutDestroy(a_layout);
    cublasLtMatmulDescDestroy(desc);
    return static_cast<int>(status);
}

#if defined(APXINF_ENABLE_FP8)
// FP8 E4M3 inputs with per-tensor device scales; f32 accumulation; BF16 output.
extern "C" int apxinf_cublaslt_gemm_fp8(const void* x, const void* w, const void* x_scale, const void* w_scale,
                                        void* out, int m, int n, int k, cudaStream_t stream) {
    cublasLtHandle_t handle = lt_handle();
    cudaDataType_t ab_type = CUDA_R_8F_E4M3;
    cudaDataType_t c_type = CUDA_R_16BF;
    cublasComputeType_t compute = CUBLAS_COMPUTE_32F;

    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F);
    const cublasOperation_t trans_a = CUBLAS_OP_T;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof(trans_a));
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &w_scale, sizeof(w_scale));
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &x_scale, sizeof(x_scale));

    cublasLtMatrixLayout_t a_layout = nullptr, b_layout = nullptr, c_layout = nullptr;
    cublasLtMatrixLayoutCreate(&a_layout, ab_type, k, n, k);
    cublasLtMatrixLayoutCreate(&b_layout, ab_type, k, m, k);
    cublasLtMatrixLayoutCreate(&c_layout, c_type, n, m, n);

    const float alpha = 1.0f;
    const float beta = 0.0f;
    const cublasStatus_t status = cublasLtMatmul(handle, desc, &alpha, w, a_layout, x, b_layout, &beta, out, c_layout,
                                                 out, c_layout, nullptr, nullptr, 0, stream);

    cublasLtMatrixLayoutDestroy(c_layout);
    cublasLtMatrixLayoutDestroy(b_layout);
    cublasLtMatrixLayoutDestroy(a_layout);
    cublasLtMatmulDescDestroy(desc);
    return static_cast<int>(status);
}
#endif  // APXINF_ENABLE_FP8
