; apxtui — CUDA / C++ query (tree-sitter-cuda 0.21, a superset of tree-sitter-cpp).
;
; Used for .cu .cuh .h .hpp .cpp .cc .cxx .inl files.  Capture names follow
; tree-sitter's code-navigation "tags" convention (@name, @definition.function,
; @definition.class, @reference.call) plus apxtui's own captures listed below.
; The extractor (apxtui/parse/cuda.py) reads the captured nodes; it never walks
; up the tree: what encloses a node (function, namespace, class, extern "C",
; template, #if arm, branch, loop) comes from the @scope.* and @context.*
; captures nested by byte range (apxtui/parse/nesting.py, contexts.py).
; Qualified names, C linkage and local types are worked out from those.
;
; To extend: add a pattern that uses one of these capture names (keep them
; exactly as written).  Captures starting with "_" are helpers for predicates
; and are ignored by the extractor.  Parameters (library, argument positions)
; are spelled in the capture name itself, not with `#set!`: py-tree-sitter 0.26
; corrupts memory when one pattern has both a text predicate (#match?,
; #any-of?) and #set!, so do not combine them.
;
;   @definition.function   a function definition (with a body)
;   @definition.prototype  a function declaration without a body (decl_only)
;   @definition.kernel     marks a definition/prototype as a `__global__` kernel
;   @definition.device     marks it `__device__` (device_fn)
;   @definition.host       marks it `__host__` (with __device__: attrs.host = true)
;   @abi.scope             a block giving C linkage to every function inside it
;                          (definitions become abi_fn, symbol = name)
;   @definition.class      a class/struct definition with a body (cpp_type) + @name
;   @definition.typedef    `using X = T;` / `typedef T X;`  (Import kind "typedef")
;   @definition.enum       `enum E { A = 0, B };` (Import kind "enumerator": alias A, path "E=0")
;   @definition.macro      `#define` (Import kind "define")
;   @include               `#include` (Import kind "include")
;   @local.declaration     a declaration; inside a function body it yields
;                          locals (var → type) and attrs.assigns
;   @local.assignment      `x = simple_expr;` inside a function (attrs.assigns)
;   @local.update          any assignment in a function: accumulations (attrs.accumulates)
;   @local.return          `return f;` / `return k<T, 4>;` of a function or kernel name
;                          (@local.returned the value): a picker's candidates (attrs.returns)
;                          and stores through subscripts/pointers (attrs.stores)
;   @reference.call        any call expression
;   @launch.kernel         a `k<<<grid, block, smem, stream>>>(args)` launch
;   @launch.api.kernel<K>.config<I_J_…>
;                          the callee name of a launch API call; K = index of the
;                          kernel argument, I, J, … = indices of the arguments
;                          reported as launch_config (`_`-separated, may be empty)
;   @call.vendor.<library> the callee name of a vendor library call; <library>
;                          is reported as attrs.library
;   @type.vendor.<library> a namespace whose types are vendor operators: calls on
;                          a local (or `Alias::f`) whose type — through
;                          `using`/`typedef` aliases — names it become vendor
;                          calls of <library>
;   @env.read              the callee name of an environment-variable read
;   @scope.namespace / @scope.class / @scope.template / @scope.conditional /
;   @scope.error           constructs whose range matters to what is inside:
;                          names, template parameters, a getenv default
;                          (`getenv(X) ? … : default`), an unclosed
;                          `extern "C" {` inside a parse error
;   @context.*             branch / switch / loop / lambda / #if contexts of
;                          calls and definitions (names: apxtui/parse/contexts.py)
;
; Callee-name captures (@launch.api, @call.vendor, @env.read) may match any
; identifier; the extractor keeps only those that are the called name of a call
; expression, also when written qualified (`flash::run_mha_fwd`) or with
; template arguments (`run_mha_fwd<T, 128>`).  For speed, a single-node pattern
; whose captures are all @launch.api.* / @call.vendor.* / @env.read (one node
; plus text predicates, as below) is run only on each call's function
; expression, not on every identifier of the file; other shapes run on the
; whole file as usual.

; ---------------------------------------------------------------- definitions

(function_definition) @definition.function

; Prototypes: `void f(int);`, `void* f(int);`, `const T& f();`
(declaration
  declarator: [
    (function_declarator)
    (pointer_declarator declarator: (function_declarator))
    (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator)))
    (reference_declarator (function_declarator))
  ]) @definition.prototype

; CUDA execution-space qualifiers (anonymous tokens on the definition).
(function_definition "__global__") @definition.kernel
(declaration "__global__") @definition.kernel
(function_definition "__device__") @definition.device
(declaration "__device__") @definition.device
(function_definition "__host__") @definition.host
(declaration "__host__") @definition.host

; extern "C" { ... } and extern "C" <single declaration>
(linkage_specification
  value: (string_literal (string_content) @_abi_lang)
  (#eq? @_abi_lang "C")) @abi.scope

; ---------------------------------------------------------------- types

(class_specifier
  name: (_) @name
  body: (field_declaration_list)) @definition.class

(struct_specifier
  name: (_) @name
  body: (field_declaration_list)) @definition.class

; enum data_layout { A = 0, B = 10 };  (Import kind "enumerator" per enumerator)
(enum_specifier body: (enumerator_list)) @definition.enum

; using Gemm = cutlass::gemm::device::Gemm<...>;   typedef float acc_t;
(alias_declaration) @definition.typedef
(type_definition) @definition.typedef

; ---------------------------------------------------------------- preprocessor

(preproc_def) @definition.macro
(preproc_function_def) @definition.macro

(preproc_include) @include

; ---------------------------------------------------------------- locals

(declaration) @local.declaration
(for_range_loop) @local.declaration
(assignment_expression operator: "=") @local.assignment
; every assignment inside a function: compound `x += v` / self-updates `x = f(x)`
; (attrs.accumulates) and stores through `a[i]`, `*p`, `a[i].f` (attrs.stores)
(assignment_expression) @local.update
(return_statement (_) @local.returned) @local.return

; ---------------------------------------------------------------- calls

; f(x), ns::f(x), f<T>(x), obj.run(x), p->run(x), k<<<g, b>>>(x)
(call_expression) @reference.call

(call_expression (kernel_call_syntax)) @launch.kernel

; ---------------------------------------------------------------- launch APIs

; cudaLaunchKernel((void*)k<T>, grid, block, args, smem, stream)
; cudaLaunchCooperativeKernel has the same signature.
((identifier) @launch.api.kernel0.config1_2_4_5
  (#any-of? @launch.api.kernel0.config1_2_4_5 "cudaLaunchKernel" "cudaLaunchCooperativeKernel"))

; cudaLaunchKernelEx(&cfg, k<T>, a, b...)   (config lives in the cudaLaunchConfig_t)
((identifier) @launch.api.kernel1.config0
  (#any-of? @launch.api.kernel1.config0 "cudaLaunchKernelEx" "cudaLaunchKernelExC"))

; cuLaunchKernel(func, gx, gy, gz, bx, by, bz, smem, stream, params, extra)
((identifier) @launch.api.kernel0.config1_2_3_4_5_6_7_8
  (#any-of? @launch.api.kernel0.config1_2_3_4_5_6_7_8 "cuLaunchKernel" "cuLaunchCooperativeKernel"))

; cuLaunchKernelEx(&config, func, params, extra)
((identifier) @launch.api.kernel1.config0
  (#eq? @launch.api.kernel1.config0 "cuLaunchKernelEx"))

; ---------------------------------------------------------------- vendor libraries
; One pattern per library; the regex runs on the callee's own name (the last
; `::` segment, without template arguments).  A vendor call is a host-side
; library call, not one device launch.

; cuBLAS: cublasGemmEx, cublasSgemm, cublasCreate, ... (but not cuBLASLt)
((identifier) @call.vendor.cublas
  (#match? @call.vendor.cublas "^cublas")
  (#not-match? @call.vendor.cublas "^cublasLt"))

; cuBLASLt: cublasLtMatmul, cublasLtMatmulDescCreate, ...
((identifier) @call.vendor.cublasLt
  (#match? @call.vendor.cublasLt "^cublasLt"))

; cuDNN
((identifier) @call.vendor.cudnn
  (#match? @call.vendor.cudnn "^cudnn"))

; NCCL
((identifier) @call.vendor.nccl
  (#match? @call.vendor.nccl "^nccl"))

; FlashAttention entry points: the v2/v3 C++ API (mha_fwd, mha_varlen_fwd,
; mha_fwd_kvcache, mha_bwd, mha_varlen_bwd), its launch dispatchers
; (run_mha_fwd_hdim128<T>, run_mha_fwd_splitkv_dispatch, run_mha_bwd...),
; the kernel launch templates (run_flash_fwd, run_flash_splitkv_fwd,
; run_flash_bwd) and flash_attn_* wrappers.
((identifier) @call.vendor.flash_attn
  (#match? @call.vendor.flash_attn "^(mha_(varlen_)?(fwd|bwd)(_kvcache)?|run_mha_(fwd|bwd)[A-Za-z0-9_]*|run_flash_(fwd|bwd|splitkv_fwd)[A-Za-z0-9_]*|flash_attn[A-Za-z0-9_]*)$"))

; CUB device-wide algorithms: cub::DeviceReduce::Sum, cub::DeviceScan::ExclusiveSum,
; cub::DeviceRadixSort::SortPairs, cub::DeviceSegmentedReduce::Max, cub::DeviceSelect::Flagged, ...
; (the class under `cub::` is named Device*; block/warp primitives such as cub::BlockScan run
; inside a kernel and are not library calls).  The first call of CUB's two-phase idiom, with a
; null temp-storage pointer (`cub::DeviceReduce::Sum(nullptr, bytes, ...)`), only sizes the
; workspace and runs nothing on the device: it is not a library call (it stays an external call).
((call_expression
   function: (qualified_identifier
     scope: (namespace_identifier) @_cub
     name: (qualified_identifier
       scope: (namespace_identifier) @_cub_class
       name: [(identifier) @call.vendor.cub
              (template_function name: (identifier) @call.vendor.cub)]))
   arguments: (argument_list . (_) @_cub_storage))
  (#eq? @_cub "cub")
  (#match? @_cub_class "^Device[A-Z]")
  (#not-match? @_cub_storage "^(nullptr|NULL|0)$"))

; Thrust algorithms run on the device when the first argument is a device execution policy
; (`thrust::sort(thrust::device, ...)`, `thrust::inclusive_scan(thrust::cuda::par.on(stream), ...)`,
; `thrust::cuda::par_nosync`): one library call, like a CUB device-wide algorithm.  Without such a
; policy the iterators decide host or device, which the source does not show: an external call.
((call_expression
   function: (qualified_identifier
     scope: (namespace_identifier) @_thrust
     name: [(identifier) @call.vendor.thrust
            (template_function name: (identifier) @call.vendor.thrust)])
   arguments: (argument_list . (_) @_thrust_policy))
  (#eq? @_thrust "thrust")
  (#match? @_thrust_policy "^thrust::(device|cuda::par(_nosync)?)\\b"))

; CUTLASS device operators: `Gemm op; op(args); op.run(stream);
; Gemm::can_implement(args);` where Gemm = cutlass::gemm::device::Gemm<...>.
((namespace_identifier) @type.vendor.cutlass
  (#eq? @type.vendor.cutlass "cutlass"))

; ---------------------------------------------------------------- environment

; getenv("X"), std::getenv("X")
((identifier) @env.read
  (#any-of? @env.read "getenv" "secure_getenv"))

; ---------------------------------------------------------------- scopes

(namespace_definition) @scope.namespace
(class_specifier body: (_)) @scope.class
(struct_specifier body: (_)) @scope.class
(union_specifier body: (_)) @scope.class
(template_declaration) @scope.template
(conditional_expression) @scope.conditional
(ERROR) @scope.error

; ---------------------------------------------------------------- contexts
; See apxtui/parse/contexts.py for the capture names.

; if / else if / else: the else clause continues its if, an if inside an else
; continues that else (an else whose body is an if is not an arm of its own)
(if_statement
  condition: (_) @context.condition
  consequence: (_) @context.body) @context.if

(if_statement
  alternative: (else_clause) @context.link) @context.chain

(else_clause
  (if_statement) @context.link) @context.chain

(else_clause
  (_) @context.body) @context.else

; switch / case: a case belongs to the innermost switch around it
(switch_statement
  condition: (_) @context.subject) @context.match

(case_statement
  value: (_)? @context.pattern) @context.case

(for_statement body: (_) @context.body) @context.loop
(for_range_loop body: (_) @context.body) @context.loop
(while_statement body: (_) @context.body) @context.loop
(do_statement
  body: (_) @context.body
  condition: (_) @context.condition) @context.loop

(lambda_expression body: (_) @context.body) @context.closure

; #if / #ifdef / #ifndef / #elif / #else arms: each covers its code but the
; condition and the arms after it; an #elif / #else continues the arm it sits in
(preproc_if
  condition: (_) @context.condition) @context.pp_if

(preproc_ifdef
  "#ifdef"
  name: (_) @context.defined) @context.pp_if

(preproc_ifdef
  "#ifndef"
  name: (_) @context.undefined) @context.pp_if

(preproc_elif
  condition: (_) @context.condition) @context.pp_if @context.continues

(preproc_elifdef
  "#elifdef"
  name: (_) @context.defined) @context.pp_if @context.continues

(preproc_elifdef
  "#elifndef"
  name: (_) @context.undefined) @context.pp_if @context.continues

(preproc_else) @context.pp_if @context.continues
