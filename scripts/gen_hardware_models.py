#!/usr/bin/env python3
"""Writes hardware/ascend910b{1,2,3,4}.yaml and hardware/{h100-sxm,h200}.yaml from one template per
family, so that the variants differ only in the figures that differ. Run from the repository
root after editing a figure here; the YAML files are committed (docs/hap.md explains each figure)."""
import os
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The element-operation rates of the cann-bench convention (docs/hap.md, "The two conventions"):
# only the 910B2 has published values to read them from; other variants price formula work at
# their vector unit's own rates.
CANN_BENCH_910B2 = [
 ("float32", 6.0e12, "the reference benchmark's published 910B2 T_HW: every published value above its read time is an integer count of formula operations at 6.0e12 per second (sigmoid bf16 case 3: 27.96 us = 10 x 16,777,216 / 6.0e12; cummin int32 case 4 and fp32 case 6: 13 scan steps x 67,108,864 / 6.0e12 = 145.40 us). 8.5% above the 5.53e12 of the sourced lanes (48 x 64 x 1.8 GHz); no vendor figure gives it"),
 ("bfloat16", 6.0e12, "as float32: the 910B vector unit has no bf16 arithmetic (formula work on bf16 is counted in fp32 with its casts)"),
 ("float16", 1.2e13, "twice float32 (128 fp16 lanes per 256-byte repeat): cummin fp16 case 5, 14 scan steps x 268,435,456 / 1.2e13 = 313.175 us, published 313.175; the fp16 trilinear grid_sampler_3d cases"),
 ("int16", 1.2e13, "as float16 (2-byte lanes): gcd int16 case 1 (values up to 1000: 3 decimal digits x 5 Euclid steps x 5 operations x 1,048,576 / 1.2e13 = 6.55 us, published 6.55)"),
 ("int32", 6.0e12, "as float32 (4-byte lanes): cummin int32 case 4 (above), the int32 gcd cases"),
 ("int64", 3.0e12, "half of int32 (32 8-byte lanes per repeat): the int64 gcd cases cost twice their int32 counterparts per element"),
 ("float64", 3.0e12, "as int64 (8-byte lanes; the 910B has no fp64 vector arithmetic, so this only bounds); no published value depends on it"),
 ("int8", 2.4e13, "four times float32 (256 1-byte lanes per repeat), by the lane-width rule the other dtypes follow; no published value depends on it"),
 ("uint8", 2.4e13, "as int8"),
 ("bool", 2.4e13, "as int8 (one byte per element)"),
]
VARIANTS = {
 "ascend910b2": dict(cores=24, ghz=1.8, src_counts="Ascend910B2.ini as reproduced in public CANN tutorials ([SoCInfo] ai_core_cnt=24, cube_core_cnt=24, vector_core_cnt=48; [AICoreSpec] cube_freq=1800)", mte_note="derived from the reference benchmark's published 910B2 T_HW: exp case 1 (fp16 [1024,1024], 2 MiB each way) publishes 1.09 us = 2 MiB / 1.92 TB/s, and every level-1 memory-bound case fits bytes_per_direction / 1.92 TB/s with reads and writes overlapping; 1.92e12 / 24 cores = 80 GB/s per core. No vendor figure for per-core MTE bandwidth is public", cann_bench_rates=CANN_BENCH_910B2),
 "ascend910b1": dict(cores=24, ghz=1.8, src_counts="UNVERIFIED: no public Ascend910B1.ini was found; assumed equal to 910B2 (24 cube / 48 vector cores at 1.8 GHz). Replace with the platform_config values of a real 910B1", mte_note="assumed equal to the 910B2 per-core figure (80 GB/s per core, derived from the reference benchmark's published 910B2 T_HW); UNVERIFIED for this variant"),
 "ascend910b3": dict(cores=20, ghz=1.8, src_counts="Ascend910B3.ini as quoted in public operator design notes (ai_core_cnt=20, vector_core_cnt=40); the clock is assumed equal to 910B2's 1.8 GHz (not verified)", mte_note="assumed equal to the 910B2 per-core figure (80 GB/s per core, derived from the reference benchmark's published 910B2 T_HW); UNVERIFIED for this variant"),
 "ascend910b4": dict(cores=20, ghz=1.5, src_counts="Ascend910B4.ini as reproduced in public CANN tutorials and test fixtures ([SoCInfo] ai_core_cnt=20, cube_core_cnt=20, vector_core_cnt=40, 32 GiB HBM, 96 MiB L2; [AICoreSpec] cube_freq=1500)", mte_note="assumed equal to the 910B2 per-core figure (80 GB/s per core, derived from the reference benchmark's published 910B2 T_HW); UNVERIFIED for this variant, whose HBM is half the 910B2's"),
}
def fmt(v): return f"{v:.6g}"
def conventions_block(rates):
    if not rates: return ""
    lines = ["conventions:", "  cann-bench:", "    vector_ops_per_s:"]
    for dtype, value, source in rates:
        lines.append(f'      {dtype}: {{value: {fmt(value)}, source: "{source}"}}')
    return "\n".join(lines) + "\n"
def gen(name, cores, ghz, src_counts, mte_note, cann_bench_rates=None):
    hz = ghz*1e9
    vec32 = 64*hz; vec16 = 128*hz; vec8 = 256*hz
    cube16 = 16*16*16*2*hz; cube8 = 16*32*16*2*hz; cube32 = 16*8*16*2*hz
    mte = 80e9
    o = []
    A = o.append
    A(f"""# Ascend {name[6:].upper()} hardware model (schema: hardware/README.md; procedure and derivations:
# docs/hap.md). Generated from one template for the 910B family by hand-edited data; every
# figure carries its source. Core counts and clock: {src_counts}.
#
# Units per AI core (the 910B's "split" architecture: one AIC with the Cube, MTE1 and
# FixPipe, and two AIV vector cores each with their Vector unit, MTE2 and MTE3; cube and
# vector cores exchange data only through global memory / L2). The solver's `cores` are AI
# cores; the vector units are `instances_per_core: 2`.
name: {name}
kind: ascend
description: "Huawei Ascend {name[6:].upper()}: {cores} AI cores (cube) + {2*cores} vector cores at {ghz} GHz; published peaks and figures derived from them or from the reference benchmark's published T_HW (docs/hap.md)"
provenance:
  origin: published
  date: 2026-12-01
  method: "vendor platform configuration (platform_config/<soc>.ini: core counts, cube_freq, buffer sizes), Ascend C documentation (cube fractal 16x16x16, int8 16x32x16, UB 32-byte blocks, vector 256 bytes per repeat), and per-case T_HW published by the reference benchmark for the 910B2 (GM bandwidth, transcendental costs); see docs/hap.md"
floor_us: 1
cores: {cores}
cube_vector_exchange: global_memory
{conventions_block(cann_bench_rates)}buffers:
  ub: {{value: 196608, source: "platform_config [AICoreSpec] ub_size=196608 (192 KiB per vector core)"}}
  l1: {{value: 524288, source: "platform_config [AICoreSpec] l1_size=524288 (512 KiB per AI core)"}}
  l0a: {{value: 65536, source: "platform_config [AICoreSpec] l0_a_size=65536"}}
  l0b: {{value: 65536, source: "platform_config [AICoreSpec] l0_b_size=65536"}}
  l0c: {{value: 131072, source: "platform_config [AICoreSpec] l0_c_size=131072"}}
units:
  - name: cube
    group: Cube
    per: core
    serves: [matrix]
    flops_per_s:
      float16: {{value: {fmt(cube16)}, source: "16x16x16 fp16 MACs per cycle (platform_config [DtypeMKN] Default=16,16,16) x 2 flops x {ghz} GHz; x {cores} cores = {fmt(cube16*cores/1e12)} TFLOPS"}}
      bfloat16: {{value: {fmt(cube16)}, source: "as float16 (bf16 uses the same 16x16x16 fractal)"}}
      int8: {{value: {fmt(cube8)}, source: "16x32x16 int8 MACs per cycle ([DtypeMKN] DT_INT8=16,32,16) x 2 x {ghz} GHz; x {cores} = {fmt(cube8*cores/1e12)} TOPS"}}
      float32: {{value: {fmt(cube32)}, source: "fp32 operands use a 16x8 (32-byte) fractal row, so 16x16x8 MACs per cycle, half the fp16 rate (assumption from the fractal layout; no vendor fp32 cube figure found)"}}
    flops_per_mac: {{value: 2, source: "a multiply-accumulate is two flops, the unit of the rates above"}}
    mac_granule: {{value: 16, source: "the cube computes whole 16x16x16 fractals: m, n and k are padded to multiples of 16"}}
    source: "matrix multiply unit of each AI core (AIC); reads L0A/L0B, accumulates in L0C"
  - name: vector
    group: Vector
    per: core
    instances_per_core: 2
    serves: [vector]
    flops_per_s:
      float32: {{value: {fmt(vec32)}, source: "256 bytes per cycle per vector core (one repeat of a vector instruction) = 64 fp32 lanes x {ghz} GHz; counted in lane-instruction slots (see vector_flops_per_element)"}}
      float16: {{value: {fmt(vec16)}, source: "256 bytes per cycle = 128 fp16 lanes x {ghz} GHz"}}
      int32: {{value: {fmt(vec32)}, source: "256 bytes per cycle = 64 int32 lanes x {ghz} GHz"}}
      int16: {{value: {fmt(vec16)}, source: "256 bytes per cycle = 128 int16 lanes x {ghz} GHz"}}
      int8: {{value: {fmt(vec8)}, source: "256 bytes per cycle = 256 byte lanes x {ghz} GHz (an upper bound: few instructions take 8-bit operands)"}}
      uint8: {{value: {fmt(vec8)}, source: "as int8"}}
      bool: {{value: {fmt(vec8)}, source: "as int8 (one byte per element)"}}
      int64: {{value: {fmt(vec32 / 2)}, source: "256 bytes per cycle = 32 int64 lanes x {ghz} GHz: a repeat moves 256 bytes whatever the element width, so 64-bit elements go at half the 32-bit rate (the published int64 gcd cases cost twice their int32 counterparts per element)"}}
      float64: {{value: {fmt(vec32 / 2)}, source: "as int64: 32 lanes of 8 bytes per 256-byte repeat (a lower bound: fp64 has no native vector arithmetic)"}}
    runs_as: {{bfloat16: float32}}
    runs_as_source: "the 910B vector unit has no bf16 arithmetic (bf16 appears only in Cast), so bf16 data is converted to fp32 on load and back on store (charged by runs_as_conversion)"
    runs_as_conversion: {{value: 1, source: "one Cast instruction slot per element each way (bf16 -> fp32 on load, fp32 -> bf16 on store)"}}
    align_bytes: {{value: 32, source: "platform_config ubblock_size=32: UB data is addressed in 32-byte blocks, so a row kept whole in UB is padded to 32 bytes"}}
    vector_flops_per_element:
      add: {{value: 1, source: "one instruction slot (Add/Adds)"}}
      mul: {{value: 1, source: "one instruction slot (Mul/Muls)"}}
      fma: {{value: 1, source: "one instruction slot (MulAddDst / Axpy multiply-accumulate)"}}
      cmp: {{value: 1, source: "one instruction slot (Compare/Max/Min)"}}
      select: {{value: 1, source: "one instruction slot (Select)"}}
      cast: {{value: 1, source: "one instruction slot (Cast)"}}
      abs: {{value: 1, source: "one instruction slot (Abs)"}}
      exp: {{value: 3, source: "derived from the published 910B2 T_HW (docs/hap.md, 'transcendental costs'): exp cases with an affine argument in fp16/bf16 (cast + fma + exp + cast) sit 4-12% above the memory time (exp case 20: 12.31 us = 6.45 slots per element) while sigmoid bf16 (cast + exp + add + div + cast) publishes 9.2 slots: exp = 3 fits both within 10%"}}
      div: {{value: 3, source: "derived with exp: sigmoid bf16 publishes 9.2 slots per element = 2 casts + add + exp (3) + div, so div = 3 (Div/Reciprocal)"}}
      log: {{value: 3, source: "assumed equal to exp (Ln is a single vector instruction like Exp); no level-1 case isolates it"}}
      sqrt: {{value: 3, source: "assumed equal to div (Sqrt is a single vector instruction); consistent with foreach_norm p=1.5 bf16/fp16 (cast + abs + sqrt + mul + add = 7 slots vs 7.4 published)"}}
      erf: {{value: 2, source: "derived from the published gelu (erf) bf16 cases: 7.37 slots per element = 2 casts + 2 mul + fma + erf, so erf <= 2.4; 2 is taken (a polynomial erf costs more: the published value is a lower bound we keep, see docs/hap.md findings)"}}
      tanh: {{value: 9, source: "no tanh instruction: tanh(z) = 1 - 2/(e^(2z) + 1) is mul + exp (3) + add + div (3) + fma = 9 slots"}}
      pow: {{value: 7, source: "x^y = exp(y * ln x): ln (3) + mul (1) + exp (3)"}}
    source: "vector unit of each AIV core, two per AI core; rates are lane-instruction slots per second (a multiply-add is one slot, unlike the CPU models' two flops), costs are slots per element"
  - name: mte2
    group: MTE
    per: core
    serves: [bytes_read]
    bytes_per_s: {{value: {fmt(mte)}, source: "{mte_note}"}}
    source: "MTE2: global memory -> UB/L1 reads of each core; reads and writes (MTE3) run concurrently"
  - name: mte3
    group: MTE
    per: core
    serves: [bytes_written]
    bytes_per_s: {{value: {fmt(mte)}, source: "{mte_note}; writes concurrent with reads"}}
    source: "MTE3: UB -> global memory writes of each vector core"
  - name: mte1
    group: MTE
    per: core
    serves: [l1_to_l0a, l1_to_l0b]
    bytes_per_s_for:
      l1_to_l0a: {{value: {fmt(512*hz)}, source: "512 bytes per cycle L1 -> L0A x {ghz} GHz"}}
      l1_to_l0b: {{value: {fmt(256*hz)}, source: "256 bytes per cycle L1 -> L0B x {ghz} GHz"}}
    source: "MTE1: L1 -> L0A/L0B operand loads of the cube; one engine, so the two directions' times add"
  - name: fixpipe
    group: MTE
    per: core
    serves: [l0c_to_gm]
    bytes_per_s: {{value: {fmt(mte)}, source: "assumed equal to the per-core GM write rate of MTE3 (no public FixPipe bandwidth figure); FixPipe writes results from L0C to global memory"}}
    source: "FixPipe: L0C -> global memory (with on-the-fly conversion) of each AI core"
  - name: hbm
    group: MTE
    per: chip
    serves: []
    bytes_per_s: {{value: 1.6e12, source: "commonly cited HBM2e bandwidth of the 910B family (about 1.6 TB/s); recorded only: the published T_HW imply 1.92 TB/s each way concurrently (3.84 TB/s), which this figure contradicts (docs/hap.md, findings), so it is not charged"}}
    source: "HBM behind global memory; not charged (see the bytes_per_s source)"
""")
    return "".join(o)
for n, v in VARIANTS.items():
    open(os.path.join(ROOT, "hardware", f"{n}.yaml"),"w").write(gen(n, **v))
NV_VARIANTS = {
 "h100-sxm": dict(hbm=3.35e12, hbm_src="NVIDIA H100 datasheet (SXM5, 80 GB HBM3): 3.35 TB/s", mem="80 GB HBM3", desc="NVIDIA H100 SXM5 80 GB"),
 "h200": dict(hbm=4.8e12, hbm_src="NVIDIA H200 datasheet (SXM, 141 GB HBM3e): 4.8 TB/s", mem="141 GB HBM3e", desc="NVIDIA H200 SXM 141 GB (same GH100 compute as H100 SXM)"),
}
def f(v): return f"{v:.6g}"
SM=132; TC_CLK=1.83e9; CORE_CLK=1.98e9
def gen_nv(name, hbm, hbm_src, mem, desc):
    tc16 = 989.4e12/SM; tc32=494.7e12/SM; tc8=1978.9e12/SM
    fp32 = 128*2*CORE_CLK; fp16 = 2*fp32; fp64 = 64*2*CORE_CLK; int32 = 64*2*CORE_CLK
    sfu = 16*CORE_CLK
    return f"""# {desc} hardware model (schema: hardware/README.md; procedure: docs/hap.md).
# Every figure is NVIDIA's published dense (non-sparse) peak or derived from the published
# SM count and clocks; per-SM rates are the chip figure / 132 SMs. Clocks: the tensor-core
# figures imply 1830 MHz (989.4e12 / (132 SMs x 4096 fp16 flops per clock)); the CUDA-core
# figures imply the 1980 MHz max boost (66.9e12 / (132 x 128 lanes x 2)). Each figure
# states the clock it assumes.
name: {name}
kind: nvidia
description: "{desc}: 132 SMs, {mem}; published dense peaks"
provenance:
  origin: published
  date: 2026-12-01
  method: "NVIDIA H100 Tensor Core GPU datasheet and architecture whitepaper (SM count, per-SM lanes, dense tensor peaks), H200 datasheet (HBM3e bandwidth); per-op costs from the PTX ISA (ex2/lg2/rcp/rsqrt/tanh.approx run on the SFU)"
floor_us: 1
cores: 132
units:
  - name: tensor_core
    group: Cube
    per: core
    serves: [matrix]
    flops_per_s:
      float16: {{value: {f(tc16)}, source: "989.4 TFLOPS dense fp16 (datasheet, 1979 with sparsity / 2) / 132 SMs; 4096 flops per SM per clock at 1830 MHz"}}
      bfloat16: {{value: {f(tc16)}, source: "989.4 TFLOPS dense bf16 / 132 SMs"}}
      float32: {{value: {f(tc32)}, source: "494.7 TFLOPS dense TF32 / 132 SMs: fp32 contractions are charged as TF32, a lower bound on an IEEE fp32 GEMM"}}
      int8: {{value: {f(tc8)}, source: "1978.9 TOPS dense int8 / 132 SMs"}}
    flops_per_mac: {{value: 2, source: "a multiply-accumulate is two flops, the unit of the datasheet peaks"}}
    source: "4th-generation tensor cores, 4 per SM, reading operands from registers/shared memory"
  - name: fp32_pipe
    group: Vector
    per: core
    serves: [vector]
    flops_per_s:
      float32: {{value: {f(fp32)}, source: "128 FP32 lanes per SM x 2 flops (FMA) x 1980 MHz = 66.9 TFLOPS / 132 (datasheet 67 TFLOPS)"}}
      float16: {{value: {f(fp16)}, source: "HFMA2: two fp16 lanes per FP32 lane, 2 x the fp32 rate (datasheet 133.8 TFLOPS non-tensor fp16)"}}
      bfloat16: {{value: {f(fp16)}, source: "HFMA2.BF16: as fp16"}}
      float64: {{value: {f(fp64)}, source: "64 FP64 lanes per SM x 2 x 1980 MHz = 33.5 TFLOPS (datasheet 34)"}}
      int32: {{value: {f(int32)}, source: "64 INT32 lanes per SM x 2 (counted as the fp32 pipe's flops) x 1980 MHz"}}
    runs_as: {{int8: int32, uint8: int32, int16: int32, int64: int32, bool: int32}}
    runs_as_source: "narrow integers and bool are computed in 32-bit registers; int64 arithmetic is emulated with 32-bit instructions, so the int32 rate is a lower bound"
    vector_flops_per_element:
      add: {{value: 2, source: "one lane slot (FADD issues on the FMA pipe like an FFMA, which counts two flops)"}}
      mul: {{value: 2, source: "one lane slot"}}
      fma: {{value: 2, source: "one lane slot, two flops"}}
      cmp: {{value: 2, source: "one lane slot (FSETP/FMNMX)"}}
      select: {{value: 2, source: "one lane slot (SEL/FSEL)"}}
      cast: {{value: 2, source: "one lane slot (F2F/I2F; a lower bound: some conversions issue at quarter rate)"}}
      abs: {{value: 2, source: "one lane slot (or a free operand modifier; charged as one slot)"}}
      exp: {{value: 2, source: "x * log2(e) before MUFU.EX2 (one slot); the ex2 itself is on the SFU"}}
      log: {{value: 2, source: "the ln(2) multiply after MUFU.LG2 (one slot)"}}
      div: {{value: 4, source: "a / b = a * rcp(b) refined: MUFU.RCP on the SFU, then a multiply and one Newton FMA (two slots)"}}
      sqrt: {{value: 4, source: "x * rsqrt(x) with one Newton step: MUFU.RSQ on the SFU, then two slots"}}
      tanh: {{value: 0.5, source: "tanh.approx.f32 is one MUFU.TANH on the SFU; a negligible slot for operand moves"}}
      erf: {{value: 20, source: "no erf instruction: a degree-9 minimax polynomial in Horner form, 10 FFMA (20 flops)"}}
      pow: {{value: 4, source: "exp2(y * log2 x): the multiply and the final scaling (two slots) around MUFU.LG2 and MUFU.EX2"}}
    source: "CUDA cores (FP32/FP16/INT pipes) of each SM; rates in flops with an FMA counting two"
  - name: sfu
    group: Vector
    per: core
    serves: [vector]
    flops_per_s:
      float32: {{value: {f(sfu)}, source: "16 SFU (MUFU) lanes per SM (4 per SM sub-partition) x 1980 MHz; one special-function result per lane per clock"}}
    runs_as: {{float16: float32, bfloat16: float32, float64: float32, int8: float32, uint8: float32, int16: float32, int32: float32, int64: float32}}
    runs_as_source: "MUFU computes in fp32 (fp16/bf16 operands are widened; fp64 transcendentals are software, charged here at the fp32 SFU rate as a lower bound). Integer division has no instruction: the compiler's sequence seeds the quotient with one reciprocal of the divisor converted to floating point (MUFU.RCP; MUFU.RCP64H for 64-bit) and corrects it with integer multiplies on the FP32/INT pipe, so an integer div is charged one SFU result here, a lower bound"
    vector_flops_per_element:
      exp: {{value: 1, source: "one MUFU.EX2"}}
      log: {{value: 1, source: "one MUFU.LG2"}}
      div: {{value: 1, source: "one MUFU.RCP"}}
      sqrt: {{value: 1, source: "one MUFU.RSQ"}}
      tanh: {{value: 1, source: "one MUFU.TANH (sm_75+)"}}
      pow: {{value: 2, source: "MUFU.LG2 + MUFU.EX2"}}
    source: "special function units of each SM; issue in parallel with the FP32 pipe"
  - name: hbm
    group: Memory
    per: chip
    serves: [bytes_read, bytes_written]
    bytes_per_s: {{value: {f(hbm)}, source: "{hbm_src}; reads and writes share it, so their bytes add"}}
    source: "device memory; the harness flushes L2 before a timed call, so compulsory traffic comes from here"
  - name: l2
    group: Memory
    per: chip
    serves: []
    bytes_per_s: {{value: 1.0e13, source: "not published by NVIDIA; about 10 TB/s is an order-of-magnitude figure for reads of the 50 MB L2 (datasheet: 50 MB). Recorded only: compulsory traffic is charged to HBM, and no work model yet states reuse that L2 would serve"}}
    source: "50 MB L2 cache (datasheet)"
"""
for n,v in NV_VARIANTS.items():
    open(os.path.join(ROOT, "hardware", f"{n}.yaml"),"w").write(gen_nv(n, **v))
