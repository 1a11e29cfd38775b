//! Host fallback backend used by unit tests without a GPU. Only RMSNorm is
//! implemented on the host; every other operator reports `Unsupported`.

use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::kernels::AttnParams;
use crate::stream::Stream;
use crate::tensor::{DType, Tensor};

pub struct CpuBackend;

fn bf16_to_f32(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(2).map(|b| f32::from_bits((u32::from(u16::from_le_bytes([b[0], b[1]]))) << 16)).collect()
}

fn f32_to_bf16(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| ((v.to_bits() >> 16) as u16).to_le_bytes()).collect()
}

fn unsupported(op: &str) -> Result<()> {
    Err(Error::Unsupported(format!("CpuBackend::{op}")))
}

impl Backend for CpuBackend {
    fn embed(_table: &Tensor, _ids: &Tensor, _out: &mut Tensor, _stream: &Stream) -> Result<()> {
        unsupported("embed")
    }

    /// Host RMSNorm: copies `x` and `w` to the host (synchronizing), normalizes, uploads.
    fn rms_norm(x: &Tensor, w: &Tensor, out: &mut Tensor, eps: f32, stream: &Stream) -> Result<()> {
        if x.dtype() != DType::BF16 {
            return unsupported("rms_norm (non-bf16)");
        }
        let (xs, ws) = (bf16_to_f32(&x.to_host(stream)?), bf16_to_f32(&w.to_host(stream)?));
        let cols = x.cols();
        let mut ys = Vec::with_capacity(xs.len());
        for row in xs.chunks_exact(cols) {
            let mean_sq = row.iter().map(|v| v * v).sum::<f32>() / cols as f32;
            let inv = 1.0 / (mean_sq + eps).sqrt();
            ys.extend(row.iter().zip(&ws).map(|(v, g)| v * inv * g));
        }
        out.copy_from_host(&f32_to_bf16(&ys), stream)
    }

    fn linear(_x: &Tensor, _w: &Tensor, _out: &mut Tensor, _stream: &Stream) -> Result<()> {
        unsupported("linear")
    }

    fn rope(_x: &mut Tensor, _pos: usize, _theta: f32, _head_dim: usize, _stream: &Stream) -> Result<()> {
        unsupported("rope")
    }

    fn kv_write(_k: &Tensor, _v: &Tensor, _kc: &mut Tensor, _vc: &mut Tensor, _pos: usize, _p: &AttnParams, _stream: &Stream) -> Result<()> {
        unsupported("kv_write")
    }

    fn attention(_q: &Tensor, _kc: &Tensor, _vc: &Tensor, _out: &mut Tensor, _kv_len: usize, _p: &AttnParams, _stream: &Stream) -> Result<()> {
        unsupported("attention")
    }

    fn silu_mul(_gate: &Tensor, _up: &Tensor, _out: &mut Tensor, _stream: &Stream) -> Result<()> {
        unsupported("silu_mul")
    }

    fn add(_acc: &mut Tensor, _x: &Tensor, _stream: &Stream) -> Result<()> {
        unsupported("add")
    }
}
