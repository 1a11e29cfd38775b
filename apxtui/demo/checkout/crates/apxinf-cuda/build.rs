//! Builds the CUDA adapters for one GPU architecture and exposes the attention
//! back-end that architecture selects as a `--cfg` flag.

use std::env;
use std::process::Command;

/// GPU architecture as `major * 10 + minor` (86 for sm_86): `APXINF_CUDA_ARCH`
/// wins, then the first visible GPU, then sm_80.
fn detect_arch() -> u32 {
    if let Ok(value) = env::var("APXINF_CUDA_ARCH") {
        let digits = value.trim().trim_start_matches("sm_");
        return digits.parse().expect("APXINF_CUDA_ARCH must look like 86 or sm_86");
    }
    let output = Command::new("nvidia-smi")
        .args(["--query-gpu=compute_cap", "--format=csv,noheader"])
        .output();
    match output {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            let first = text.lines().next().unwrap_or("8.0").trim().replace('.', "");
            first.parse().unwrap_or(80)
        }
        _ => 80,
    }
}

fn main() {
    println!("cargo:rustc-check-cfg=cfg(apxinf_fa2_sm80)");
    println!("cargo::rustc-check-cfg=cfg(apxinf_cutlass_fmha)");
    println!("cargo:rerun-if-env-changed=APXINF_CUDA_ARCH");

    let arch = detect_arch();
    let fp8 = env::var("CARGO_FEATURE_FP8").is_ok();
    let mut sources = vec![
        "adapters/norm.cu",
        "adapters/gemm.cu",
        "adapters/rope.cu",
        "adapters/attention.cu",
        "adapters/activation.cu",
        "adapters/embedding.cu",
        "adapters/graph.cu",
        "adapters/memory.cu",
    ];
    if arch >= 80 && arch < 90 {
        println!("cargo:rustc-cfg=apxinf_fa2_sm80");
        sources.push("adapters/flash_attn.cu");
        sources.push("third_party/flash-attention/flash_api.cu");
    }
    if arch >= 100 {
        println!("cargo::rustc-cfg=apxinf_cutlass_fmha");
        sources.push("adapters/cutlass_fmha.cu");
    }
    if fp8 {
        sources.push("adapters/quant.cu");
    }

    let mut build = cc::Build::new();
    build
        .cuda(true)
        .flag(&format!("-arch=sm_{arch}"))
        .flag("-std=c++17")
        .flag("-O3")
        .include("kernels")
        .include("kernels/cutlass/include")
        .include("third_party/flash-attention");
    if fp8 {
        build.define("APXINF_ENABLE_FP8", None);
    }
    for source in &sources {
        build.file(source);
        println!("cargo:rerun-if-changed={source}");
    }
    build.compile("apxinf_cuda_adapters");

    println!("cargo:rustc-link-lib=cudart");
    println!("cargo:rustc-link-lib=cublasLt");
}
