"""What public sources say about the GPUs the presets model: one data sheet per GPU.

A data sheet holds figures as their sources give them (vendor specifications, AMD's ROCm
documentation, published microbenchmarks), each with where it comes from: a key of
``SOURCES``, or ``ASSUMED`` / ``DERIVED`` with a note saying why or how. ``presets``
turns a data sheet into the timing model's configuration. Facts the model has no
parameter for (128 B lines, the matrix cores, address translation) sit under
``not_modelled``.

Latencies are load-to-use latencies of a dependent load that hits at that level (what a
pointer chase measures): ``presets`` splits them into the model's per-level latencies.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    """A public document: its title and address."""
    title: str
    url: str


SOURCES: dict[str, Source] = {
    "mgpusim": Source(
        "MGPUSim's R9 Nano platform (timingconfig/r9nano and shaderarray builders; summarised "
        "in the project's reference/simulator.md, section 1.4)",
        "https://github.com/sarchlab/mgpusim/tree/main/amd/samples/runner/timingconfig"),
    "r9nano-spec": Source(
        "Hardwareluxx on AMD's Radeon R9 Nano launch slide (4,096 stream processors, up to "
        "1,000 MHz, 4 GB HBM on 4,096 bits at 500 MHz = 512 GB/s, 8.19 TFLOPS)",
        "https://www.hardwareluxx.de/index.php/news/hardware/grafikkarten/"
        "36409-radeon-r9-nano-vermutlich-viele-gemeinsamkeiten-mit-fury-x.html"),
    "rocm-specs": Source(
        "ROCm documentation: AMD GPU specifications (the Instinct table: CUs, LDS, L2, L3, "
        "L1 vector cache, VGPR and SGPR files per CU)",
        "https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html"),
    "rocm-mi100": Source(
        "ROCm documentation: AMD Instinct MI100 microarchitecture",
        "https://rocm.docs.amd.com/en/latest/conceptual/gpu-arch/mi100.html"),
    "rocm-mi250": Source(
        "ROCm documentation: AMD Instinct MI250 microarchitecture",
        "https://rocm.docs.amd.com/en/latest/conceptual/gpu-arch/mi250.html"),
    "rocm-mi300": Source(
        "ROCm documentation: AMD Instinct MI300 series microarchitecture",
        "https://rocm.docs.amd.com/en/latest/conceptual/gpu-arch/mi300.html"),
    "rocprof-l2": Source(
        "ROCm Compute Profiler documentation: L2 cache (TCC)",
        "https://rocm.docs.amd.com/projects/rocprofiler-compute/en/latest/conceptual/"
        "l2-cache.html"),
    "rocprof-model": Source(
        "ROCm Compute Profiler documentation: performance model (data types per CDNA "
        "generation: packed FP32 on CDNA 2 and CDNA 3, not on CDNA)",
        "https://rocm.docs.amd.com/projects/rocprofiler-compute/en/latest/conceptual/"
        "performance-model.html"),
    "anandtech-mi210": Source(
        "AnandTech, 'AMD Releases Instinct MI210' (specification table of MI250, MI210, "
        "MI100: clocks, memory clock, bus width, bandwidth)",
        "https://www.anandtech.com/show/17326/"
        "amd-releases-instinct-mi210-accelerator-cdna-2-on-a-pcie-card"),
    "mi250x-launch": Source(
        "AMD's MI200 launch table as reprinted by Zexron (MI250X: 220 CUs, up to 47.9 TF "
        "FP64/FP32 vector, 128 GB HBM2e, 3.2 TB/s)",
        "https://zexron.com/amd-mi250-x-aldebaran-as-mcm-with-up-to-479-teraflop-s-and-560-"
        "watt-tdp"),
    "mi300a-spec": Source(
        "AMD's MI300A specifications as quoted by the V-Engineer blog (228 CUs, peak engine "
        "clock 2,100 MHz, peak FP32 122.6 TFLOPS)",
        "https://vengineer.hatenablog.com/entry/2023/12/11/080000"),
    "sth-mi300": Source(
        "ServeTheHome, 'AMD Instinct MI300X GPU and MI300A APUs Launched' (128-channel "
        "interleaved HBM3 interface; 256 MB Infinity Cache at 17 TB/s peak)",
        "https://www.servethehome.com/amd-instinct-mi300x-gpu-and-mi300a-apus-launched-for-"
        "ai-era/3/"),
    "wahlgren-mi300a": Source(
        "Wahlgren et al., 'Dissecting CPU-GPU Unified Physical Memory on AMD MI300A APUs' "
        "(arXiv 2508.12743): eight HBM3 stacks of 16 channels, 5.3 TB/s; a 256 MB Infinity "
        "Cache in 128 slices, 17.2 TB/s",
        "https://arxiv.org/abs/2508.12743"),
    "cnc-mi300x": Source(
        "Chips and Cheese, 'Testing AMD's Giant MI300X' (2024): latency, bandwidth and TLB "
        "measurements",
        "https://chipsandcheese.com/p/testing-amds-giant-mi300x"),
    "cnc-mi300a": Source(
        "Chips and Cheese, 'Inside the AMD Instinct MI300A's Giant Memory Subsystem' (2025)",
        "https://chipsandcheese.com/p/inside-the-amd-radeon-instinct-mi300as"),
    "cnc-mi210": Source(
        "Chips and Cheese, 'AMD's Radeon Instinct MI210: GCN Lives On' (2023)",
        "https://chipsandcheese.com/p/amds-radeon-instinct-mi210-gcn-lives-on"),
    "gpu-benches": Source(
        "te42kyfo/gpu-benches, gpu-latency: single-wavefront pointer chase over growing "
        "buffers, latency in cycles at the measured clock (mi210.txt at 1,700 MHz, "
        "rx6900xt.txt at 2,570 MHz)",
        "https://github.com/te42kyfo/gpu-benches/tree/master/gpu-latency"),
    "llvm-occupancy": Source(
        "LLVM's AMDGPU test agpr-register-count.ll (gfx908: occupancy 10 waves per SIMD, "
        "VGPRs allocated in blocks of 4; gfx90a: occupancy 8, blocks of 8)",
        "https://github.com/llvm/llvm-project/blob/main/llvm/test/CodeGen/AMDGPU/"
        "agpr-register-count.ll"),
    "mgpusim-mi300a": Source(
        "MGPUSim's MI300A platform (timingconfig/mi300a/builder.go: 8 wavefront slots and "
        "32,768 VGPRs per SIMD)",
        "https://github.com/sarchlab/mgpusim/blob/main/amd/samples/runner/timingconfig/"
        "mi300a/builder.go"),
    "amd-cdna3": Source(
        "AMD CDNA 3 white paper, as quoted by Fluid Numerics' MI300A guide: 'The L2 is a "
        "4MB, 16-way set associative cache, featuring 16 massively parallel channels, each "
        "256KB in size'",
        "https://galapagos.fluidnumerics.com/gpu/working_with_mi300a"),
    "rocm-partitions": Source(
        "AMD ROCm blog, 'AMD Instinct MI300X GPU partitioning overview' (in SPX mode "
        "work-groups are distributed to the XCDs in round-robin order; each XCD has its "
        "own L2)",
        "https://rocm.blogs.amd.com/software-tools-optimization/compute-memory-modes/"
        "README.html"),
    "tracelens-mi210": Source(
        "AMD-AGI/TraceLens test trace tests/traces/mi210 (PyTorch profiler on an AMD "
        "Instinct MI210): 562 kernels, the shortest a BFloat16 fill of 1.919 us, several "
        "scalar subtractions of 2.079 us",
        "https://github.com/AMD-AGI/TraceLens"),
    "pyhip-latency": Source(
        "tingqli/pyhip, docs/mem_latency.md (MI308X, CDNA 3: an LDS read without bank "
        "conflicts takes 52 cycles for b32)",
        "https://github.com/tingqli/pyhip/blob/main/docs/mem_latency.md"),
}

ASSUMED = "assumed"
"""A figure no public source gives: the note says what was taken instead, and why."""
DERIVED = "derived"
"""A figure computed from other sourced figures: the note gives the arithmetic."""


@dataclass(frozen=True)
class Fact:
    """One figure of a data sheet, in the unit its source gives, and where it is from."""
    value: float
    unit: str
    source: str
    note: str = ""

    def __post_init__(self):
        if self.source not in SOURCES and self.source not in (ASSUMED, DERIVED):
            raise ValueError(f"unknown source {self.source!r}")
        if self.source in (ASSUMED, DERIVED) and not self.note:
            raise ValueError(f"an {self.source} figure must say why or how")


@dataclass(frozen=True)
class DataSheet:
    """A GPU as public sources describe it.

    ``facts`` are the figures the model's configuration is made from (names as in
    ``FACTS``); ``not_modelled`` are figures of parts the model does not have yet.
    ``vendor_fp32_tflops`` is the vendor's published peak vector FP32 for the whole
    product: ``product_dies`` dies (an MI250X holds two GCDs, the preset models one),
    counting packed FP32 (two operations per lane per instruction) if
    ``vendor_counts_packed``. ``queues_sourced`` marks a data sheet whose source is a
    simulator's own configuration, queue and MSHR sizes included (MGPUSim's R9 Nano):
    the other presets size their MSHRs for their memory's bandwidth.
    """
    name: str
    title: str
    architecture: str
    facts: dict[str, Fact]
    not_modelled: dict[str, Fact]
    vendor_fp32_tflops: Fact
    packed_fp32: Fact
    vendor_counts_packed: bool = False
    product_dies: int = 1
    queues_sourced: bool = False


FACTS = {
    "compute_units": "compute units",
    "shader_arrays": "groups the trace names its CUs by (GPU.SA[i].CU[j])",
    "clock_mhz": "peak engine clock",
    "simds_per_cu": "SIMD units per CU",
    "lanes_per_simd": "lanes per SIMD (a 64-wide wavefront takes 64 / lanes cycles per op)",
    "wave_slots_per_simd": "wavefront slots per SIMD",
    "vgprs_per_lane": "vector registers per lane of a SIMD",
    "vgpr_granule": "vector registers are allocated to a wavefront in blocks of this",
    "sgprs_per_cu": "scalar registers per CU",
    "lds_bytes": "local data share per CU",
    "l1_bytes": "vector L1 cache per CU",
    "l1_ways": "vector L1 associativity",
    "xcds": "dies with their own L2 (XCDs): the CUs split evenly among them, work-groups "
            "dealt to them in turn",
    "l2_bytes": "L2 cache in all",
    "l2_channels": "L2 channels (banks) in all",
    "l2_ways": "L2 associativity",
    "l2_interleave_bytes": "blocks of this size are what goes to one L2 channel",
    "address_hash": "1 if addresses are hashed across channels (and cache sets), 0 if "
                    "interleaved in turn",
    "mall_bytes": "memory-side cache (Infinity Cache) in all, one slice per memory "
                  "channel; 0 if none",
    "hbm_channels": "memory channels",
    "hbm_gbs": "peak memory bandwidth",
    "latency_l1": "load-to-use latency of an L1 hit",
    "latency_l2": "load-to-use latency of an L2 hit",
    "latency_mall": "load-to-use latency of a memory-side cache hit (0 if none)",
    "latency_hbm": "load-to-use latency of a load from memory",
    "lds_latency": "LDS read latency without bank conflicts",
    "launch_overhead": "time from a kernel launch to its first work-group dispatch",
}
"""The figures every data sheet gives, and what each means."""

MiB = 1 << 20
KiB = 1 << 10

_LAUNCH_MI210 = (
    "the shortest kernel in a public MI210 trace (CDNA 2, the MI250X's GCD): a kernel's "
    "recorded time, from the command processor taking it to its end, is never below this "
    "launch cost, and the model puts all of it before the first dispatch")
_LAUNCH_AS_MI210 = (
    "as the MI210's 1,919 ns (TraceLens: the shortest kernel of a public trace), the "
    "nearest part measured: no public trace of this one was found")
_LDS_CDNA = (
    "CDNA 3's measured 52 cycles (an MI308X, pyhip), less the model's one cycle per bank "
    "pass: Chips and Cheese find CDNA 2's LDS latency just under its 37.5 ns scalar-cache "
    "latency (about 64 cycles at 1.7 GHz), the same order")
_L1_WAYS = ("4 ways, as the R9 Nano's (MGPUSim): the associativity is not in the sources "
            "found")

_CDNA_CU = {
    "sgprs_per_cu": Fact(3200, "registers", "rocm-specs", "a 12.5 KiB SGPR file per CU"),
    "lds_bytes": Fact(64 * KiB, "bytes", "rocm-specs"),
    "l1_ways": Fact(4, "ways", ASSUMED, _L1_WAYS),
    "address_hash": Fact(1, "", "rocprof-l2",
                         "'Mapping of incoming requests to a specific L2 channel is determined "
                         "by a hashing mechanism that attempts to evenly distribute requests'; "
                         "the hash is not published: the model XOR-folds the block number, "
                         "and hashes cache sets the same way"),
}
"""What every CDNA generation's CU shares in the sources."""

_ONE_DIE_NO_MALL = {
    "xcds": Fact(1, "die", "rocprof-l2", "one L2 shared by every CU"),
    "mall_bytes": Fact(0, "bytes", "rocprof-l2",
                       "L2 misses go over Infinity Fabric to memory: no memory-side cache"),
    "hbm_channels": Fact(32, "channels", DERIVED,
                         "4,096 bits of HBM2(e) in 128-bit channels (8 per stack, 4 stacks), "
                         "one per L2 channel as ROCm Compute Profiler's 32 L2 channels"),
    "latency_mall": Fact(0, "cycles", "rocprof-l2", "no memory-side cache"),
}
"""The memory side of CDNA and CDNA 2 (one die's worth for an MI250X GCD)."""

R9NANO = DataSheet(
    name="r9nano", title="AMD Radeon R9 Nano", architecture="GCN 3 (Fiji, gfx803)",
    facts={
        "compute_units": Fact(64, "CUs", "r9nano-spec", "4,096 stream processors, 64 per CU"),
        "shader_arrays": Fact(16, "arrays", "mgpusim", "16 shader arrays of 4 CUs"),
        "clock_mhz": Fact(1000, "MHz", "r9nano-spec", "up to 1,000 MHz"),
        "simds_per_cu": Fact(4, "SIMDs", "mgpusim"),
        "lanes_per_simd": Fact(16, "lanes", "mgpusim"),
        "wave_slots_per_simd": Fact(10, "wavefronts", "mgpusim", "a pool of 10 per SIMD"),
        "vgprs_per_lane": Fact(256, "registers", "mgpusim", "16,384 per SIMD = 256 per lane"),
        "vgpr_granule": Fact(4, "registers", "mgpusim"),
        "sgprs_per_cu": Fact(3200, "registers", "mgpusim"),
        "lds_bytes": Fact(64 * KiB, "bytes", "mgpusim"),
        "l1_bytes": Fact(16 * KiB, "bytes", "mgpusim"),
        "l1_ways": Fact(4, "ways", "mgpusim"),
        "l2_bytes": Fact(2 * MiB, "bytes", "mgpusim", "16 banks of 128 KB"),
        "l2_channels": Fact(16, "channels", "mgpusim", "one bank per DRAM controller"),
        "l2_ways": Fact(16, "ways", "mgpusim"),
        "l2_interleave_bytes": Fact(128, "bytes", "mgpusim"),
        "xcds": Fact(1, "die", "mgpusim", "one L2 shared by every CU"),
        "address_hash": Fact(0, "", "mgpusim", "MGPUSim interleaves addresses in turn"),
        "mall_bytes": Fact(0, "bytes", "mgpusim", "no memory-side cache"),
        "hbm_channels": Fact(16, "channels", "mgpusim", "one memory controller per L2 bank"),
        "latency_mall": Fact(0, "cycles", "mgpusim", "no memory-side cache"),
        "hbm_gbs": Fact(512, "GB/s", "r9nano-spec"),
        "latency_l1": Fact(26, "cycles", "mgpusim",
                           "MGPUSim's component latencies, not a measurement: the vector-"
                           "memory pipeline's 6 cycles and the L1V's 20"),
        "latency_l2": Fact(36, "cycles", "mgpusim", "the L1 path and the L2 bank's 10 cycles"),
        "latency_hbm": Fact(136, "cycles", "mgpusim",
                            "the L2 path and the ideal memory controller's 100 cycles"),
        "lds_latency": Fact(14, "cycles", "mgpusim", "the LDS unit's fixed 14 cycles"),
        "launch_overhead": Fact(1600, "cycles", "mgpusim", "MGPUSim v2's constant kernel "
                                                           "overhead"),
    },
    not_modelled={
        "scalar_and_instruction_caches": Fact(
            16 * KiB, "bytes", "mgpusim",
            "a 16 KB scalar L1 and a 32 KB instruction L1 per shader array, and the TLBs: "
            "MGPUSim has them, the model has no scalar or instruction fetch path"),
    },
    vendor_fp32_tflops=Fact(8.19, "TFLOPS", "r9nano-spec"),
    packed_fp32=Fact(0, "", "mgpusim", "GCN 3 has no packed FP32"),
    queues_sourced=True,
)

_CDNA2_LATENCY = {
    "latency_l1": Fact(125, "cycles", "gpu-benches",
                       "MI210 (the same gfx90a GCD at the same 1,700 MHz): 125.1 cycles "
                       "(73.6 ns) up to 15 kB"),
    "latency_l2": Fact(238, "cycles", "gpu-benches",
                       "MI210: 233-245 cycles (about 140 ns) from 18 kB to 4 MB"),
    "latency_hbm": Fact(570, "cycles", "gpu-benches",
                        "MI210: 569-584 cycles (about 336 ns) from 14 MB to 57 MB, before "
                        "TLB misses add more"),
}

MI100 = DataSheet(
    name="mi100", title="AMD Instinct MI100", architecture="CDNA (Arcturus, gfx908)",
    facts={
        "compute_units": Fact(120, "CUs", "rocm-specs"),
        "shader_arrays": Fact(8, "engines", "rocm-mi100", "eight shader engines of 15 CUs"),
        "clock_mhz": Fact(1502, "MHz", "anandtech-mi210", "boost clock 1502 MHz"),
        "simds_per_cu": Fact(4, "SIMDs", "rocm-mi100"),
        "lanes_per_simd": Fact(16, "lanes", "rocm-mi100", "16 data elements per instruction"),
        "wave_slots_per_simd": Fact(10, "wavefronts", "llvm-occupancy",
                                    "gfx908 occupancy 10; ROCm: up to ten wavefronts"),
        "vgprs_per_lane": Fact(256, "registers", "rocm-mi100",
                               "256 VGPRs (and 256 AccVGPRs for the matrix cores, not "
                               "modelled)"),
        "vgpr_granule": Fact(4, "registers", "llvm-occupancy"),
        **_CDNA_CU,
        "l1_bytes": Fact(16 * KiB, "bytes", "rocm-specs"),
        "l2_bytes": Fact(8 * MiB, "bytes", "rocm-specs"),
        "l2_channels": Fact(32, "channels", "rocprof-l2"),
        "l2_ways": Fact(16, "ways", ASSUMED, "16 ways, as the R9 Nano's L2: the CDNA figure "
                                             "is not in the sources found"),
        "l2_interleave_bytes": Fact(256, "bytes", "rocprof-l2", "256B address interleaving"),
        **_ONE_DIE_NO_MALL,
        "hbm_gbs": Fact(1228.8, "GB/s", "rocm-mi100",
                        "1.228 TB/s from four HBM2 stacks on 4,096 bits (AnandTech: 2.4 "
                        "Gbps, 4,096 x 2.4 / 8 = 1,228.8 GB/s)"),
        **{key: Fact(fact.value, fact.unit, ASSUMED,
                     "CDNA 2's measured cycles (" + fact.note + "): no measurement of the "
                     "MI100 was found, and CDNA 2 kept CDNA's two-level GCN cache hierarchy "
                     "(Chips and Cheese, MI210)")
           for key, fact in _CDNA2_LATENCY.items()},
        "lds_latency": Fact(51, "cycles", ASSUMED, _LDS_CDNA),
        "launch_overhead": Fact(1919, "ns", ASSUMED, _LAUNCH_AS_MI210),
    },
    not_modelled={
        "accvgprs_per_lane": Fact(256, "registers", "rocm-specs",
                                  "accumulation registers of the matrix cores (MFMA)"),
        "matrix_fp32_tflops": Fact(46.1, "TFLOPS", "rocm-mi100", "matrix cores (MFMA)"),
    },
    vendor_fp32_tflops=Fact(23.1, "TFLOPS", "rocm-mi100", "vector FP32, 128 FLOPs/clock/CU"),
    packed_fp32=Fact(0, "", "rocprof-model", "CDNA has no packed FP32"),
)

MI250X = DataSheet(
    name="mi250x", title="AMD Instinct MI250X, one GCD",
    architecture="CDNA 2 (Aldebaran, gfx90a)",
    facts={
        "compute_units": Fact(110, "CUs", "rocm-specs", "220 in all, 110 per GCD"),
        "shader_arrays": Fact(10, "arrays", ASSUMED,
                              "10 groups of 11 CUs, for the trace's names only (the model "
                              "gives an array nothing of its own): the GCD's engine layout "
                              "is not in the sources found"),
        "clock_mhz": Fact(1700, "MHz", "rocm-mi250", "peak clock 1.7 GHz"),
        "simds_per_cu": Fact(4, "SIMDs", "rocm-mi250"),
        "lanes_per_simd": Fact(16, "lanes", "rocm-mi250"),
        "wave_slots_per_simd": Fact(8, "wavefronts", "llvm-occupancy", "gfx90a occupancy 8"),
        "vgprs_per_lane": Fact(512, "registers", "rocm-specs",
                               "a 512 KiB VGPR file per CU: 4 SIMDs x 64 lanes x 512 x 4 B, "
                               "architected and accumulation registers in one file"),
        "vgpr_granule": Fact(8, "registers", "llvm-occupancy"),
        **_CDNA_CU,
        "l1_bytes": Fact(16 * KiB, "bytes", "rocm-specs"),
        "l2_bytes": Fact(8 * MiB, "bytes", "rocm-specs", "16 MB in all, 8 per GCD"),
        "l2_channels": Fact(32, "channels", "rocprof-l2"),
        "l2_ways": Fact(16, "ways", ASSUMED, "16 ways, as the R9 Nano's L2: the CDNA 2 figure "
                                             "is not in the sources found"),
        "l2_interleave_bytes": Fact(256, "bytes", "rocprof-l2"),
        **_ONE_DIE_NO_MALL,
        "hbm_gbs": Fact(1638.4, "GB/s", DERIVED,
                        "4,096 bits x 3.2 Gbps / 8 per GCD (AnandTech: 3.2 Gbps HBM2e on "
                        "8,192 bits for two GCDs; ROCm: 1.6 TB/s per GCD)"),
        **_CDNA2_LATENCY,
        "lds_latency": Fact(51, "cycles", ASSUMED, _LDS_CDNA),
        "launch_overhead": Fact(1919, "ns", "tracelens-mi210", _LAUNCH_MI210),
    },
    not_modelled={
        "second_gcd": Fact(2, "GCDs", "rocm-mi250",
                           "an MI250X package holds two GCDs, each its own device with its "
                           "own HBM; the preset is one of them"),
        "l2_line_bytes": Fact(128, "bytes", "rocprof-l2",
                              "L2 lines are 128 B on MI200; the model's lines are 64 B"),
        "scalar_cache_latency_ns": Fact(37.5, "ns", "cnc-mi210",
                                        "the model has no scalar memory path"),
    },
    vendor_fp32_tflops=Fact(47.9, "TFLOPS", "mi250x-launch",
                            "vector FP32 of both GCDs, not packed; ROCm's MI250 table gives "
                            "packed FP32 twice the vector rate"),
    packed_fp32=Fact(1, "", "rocprof-model",
                     "two FP32 operations per lane per instruction; the model issues none"),
    product_dies=2,
)

_CDNA3_FACTS = {
    "shader_arrays": Fact(8, "XCDs", "rocm-mi300", "eight XCDs of 38 active CUs"),
    "xcds": Fact(8, "XCDs", "rocm-partitions",
                 "eight XCDs, each with its own L2; work-groups go to them in turn"),
    "clock_mhz": Fact(2100, "MHz", DERIVED,
                      "ROCm's 163.4 TFLOPS / (304 CUs x 256 FLOPs per clock per CU) = 2,099.6 "
                      "MHz; AMD gives MI300A's peak engine clock as 2,100 MHz"),
    "simds_per_cu": Fact(4, "SIMDs", "rocm-mi300",
                         "vector FP64 128 FLOPs per clock per CU: 4 SIMDs x 16 lanes x FMA"),
    "lanes_per_simd": Fact(16, "lanes", "rocm-mi300"),
    "wave_slots_per_simd": Fact(8, "wavefronts", "mgpusim-mi300a",
                                "as CDNA 2's gfx90a (LLVM: occupancy 8)"),
    "vgprs_per_lane": Fact(512, "registers", "rocm-specs", "a 512 KiB VGPR file per CU"),
    "vgpr_granule": Fact(8, "registers", ASSUMED,
                         "blocks of 8, as gfx90a (LLVM): gfx942 shares its unified file"),
    **_CDNA_CU,
    "l1_bytes": Fact(32 * KiB, "bytes", "rocm-specs"),
    "l2_ways": Fact(16, "ways", "amd-cdna3", "16-way set associative"),
    "l2_interleave_bytes": Fact(256, "bytes", "rocprof-l2"),
    "mall_bytes": Fact(256 * MiB, "bytes", "wahlgren-mi300a",
                       "a 256 MB Infinity Cache in 128 slices, on the I/O dies between the "
                       "L2s and HBM (Chips and Cheese too)"),
    "hbm_channels": Fact(128, "channels", "sth-mi300",
                         "a 128-channel interleaved HBM3 interface (Wahlgren et al.: eight "
                         "stacks of 16), one Infinity Cache slice per channel"),
    "hbm_gbs": Fact(5300, "GB/s", "rocm-mi300", "5.3 TB/s, eight HBM3 stacks"),
    "latency_mall": Fact(218, "ns", "cnc-mi300x", "an Infinity Cache hit from the GPU"),
    "latency_l1": Fact(43, "ns", DERIVED,
                       "Chips and Cheese find MI300X's 32 KB L1 about as fast as RDNA 2's "
                       "128 KB L1, which gpu-benches measures at 42-45 ns (RX 6900 XT)"),
    "latency_l2": Fact(82, "ns", DERIVED,
                       "Chips and Cheese find MI300X's L2 matching RDNA 2's in latency, "
                       "which gpu-benches measures at 77-87 ns (RX 6900 XT, 0.4-4 MB)"),
    "latency_hbm": Fact(305, "ns", DERIVED,
                        "Chips and Cheese: MI300X's Infinity Cache hit takes about 218 ns "
                        "from the GPU; on MI300A, which shares the memory subsystem, HBM "
                        "takes 227 ns against an Infinity Cache hit's 140 ns from the CPU: "
                        "218 + (227 - 140) = 305 ns"),
    "lds_latency": Fact(51, "cycles", DERIVED,
                        "pyhip's 52 cycles for a conflict-free b32 LDS read on MI308X (CDNA 3), "
                        "less the model's one cycle per bank pass"),
    "launch_overhead": Fact(1919, "ns", ASSUMED, _LAUNCH_AS_MI210),
}

_CDNA3_NOT_MODELLED = {
    "l2_line_bytes": Fact(128, "bytes", "rocprof-l2",
                          "L1 and L2 lines are 128 B on MI300 (Chips and Cheese too); the "
                          "model's are 64 B"),
    "tlb_miss_ns": Fact(47.1, "ns", "cnc-mi300x",
                        "past 16,384 4 KB pages per XCD (64 MB); the model translates no "
                        "addresses"),
    "cross_xcd_atomic_ns": Fact(202.5, "ns", "cnc-mi300x",
                                "116 ns within an XCD to 202.5 ns across XCDs"),
}

MI300A = DataSheet(
    name="mi300a", title="AMD Instinct MI300A (its GPU)", architecture="CDNA 3 (gfx942)",
    facts={
        **_CDNA3_FACTS,
        "compute_units": Fact(228, "CUs", "rocm-specs", "228, 38 per XCD"),
        "shader_arrays": Fact(6, "XCDs", "rocm-mi300", "six XCDs on MI300A"),
        "xcds": Fact(6, "XCDs", "rocm-mi300", "six XCDs, each with its own 4 MB L2"),
        "clock_mhz": Fact(2100, "MHz", "mi300a-spec", "peak engine clock 2,100 MHz"),
        "l2_bytes": Fact(24 * MiB, "bytes", "rocm-specs", "24 MB, 4 per XCD"),
        "l2_channels": Fact(96, "channels", "rocprof-l2", "16 channels of 256 KB per XCD"),
        "hbm_gbs": Fact(5300, "GB/s", "cnc-mi300a", "5.3 TB/s of HBM3, as MI300X"),
    },
    not_modelled={
        **_CDNA3_NOT_MODELLED,
        "cpu_cores": Fact(24, "Zen 4 cores", "cnc-mi300a",
                          "three CCDs sharing the HBM and the Infinity Cache with the GPU"),
    },
    vendor_fp32_tflops=Fact(122.6, "TFLOPS", "mi300a-spec", "counts packed FP32"),
    packed_fp32=Fact(1, "", "rocprof-model",
                     "two FP32 operations per lane per instruction; the model issues none"),
    vendor_counts_packed=True,
)

MI300X = DataSheet(
    name="mi300x", title="AMD Instinct MI300X", architecture="CDNA 3 (gfx942)",
    facts={
        **_CDNA3_FACTS,
        "compute_units": Fact(304, "CUs", "rocm-specs", "304, 38 per XCD"),
        "l2_bytes": Fact(32 * MiB, "bytes", "rocm-specs", "32 MB, 4 per XCD"),
        "l2_channels": Fact(128, "channels", "rocprof-l2", "16 channels of 256 KB per XCD"),
    },
    not_modelled=_CDNA3_NOT_MODELLED,
    vendor_fp32_tflops=Fact(163.4, "TFLOPS", "rocm-mi300",
                            "vector FP32, 256 FLOPs per clock per CU: counts packed FP32"),
    packed_fp32=Fact(1, "", "rocprof-model",
                     "two FP32 operations per lane per instruction; the model issues none"),
    vendor_counts_packed=True,
)

DATASHEETS: tuple[DataSheet, ...] = (R9NANO, MI100, MI250X, MI300A, MI300X)
"""Every data sheet, the default (the R9 Nano) first."""
