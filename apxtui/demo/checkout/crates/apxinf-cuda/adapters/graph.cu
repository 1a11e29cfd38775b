// Copyright 2026 apxinf contributors.
// C ABI over the CUDA Graph runtime API (stream capture, instantiate, launch).

#include <cuda_runtime.h>

extern "C" int apxinf_graph_begin(cudaStream_t stream) {
    return static_cast<int>(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
}

extern "C" int apxinf_graph_end(cudaStream_t stream, cudaGraph_t* graph) {
    return static_cast<int>(cudaStreamEndCapture(stream, graph));
}

extern "C" int apxinf_graph_instantiate(cudaGraphExec_t* exec, cudaGraph_t graph) {
    const cudaError_t status = cudaGraphInstantiate(exec, graph, 0);
    cudaGraphDestroy(graph);
    return static_cast<int>(status);
}

extern "C" int apxinf_graph_launch(cudaGraphExec_t exec, cudaStream_t stream) {
    return static_cast<int>(cudaGraphLaunch(exec, stream));
}

extern "C" int apxinf_graph_destroy(cudaGraphExec_t exec) {
    return static_cast<int>(cudaGraphExecDestroy(exec));
}
