// driver.cpp: runs a job of kernel dispatches (written by the Go harness) over host buffers,
// with the .metal library compiled as C++ through the metal_stdlib shim.
//
// Invariant: a dispatch runs exactly the grid Metal would run — every threadgroup of
// groups[x,y,z], each with threads[x,y,z] threads and the same thread ids — and each buffer
// argument is the job's buffer at the binding's byte offset; buffers end at a guard page and
// read-only ones are mapped read-only, so a kernel that strays or writes a weight crashes.
// Mutation that would silently break it: swapping x and y of threadgroup_position_in_grid —
// the matmul (x: output tiles, y: row tiles) and attention (x: query tiles, y: heads) would
// still write the outputs of a square grid, from the wrong tiles; their odd shapes notice.
//
// Job (stdin, little endian):  "TSJ1" | str mutant | u32 nbuf | nbuf x (u32 flags, u64 len, bytes)
//   | u32 ndispatch | ndispatch x (str kernel | u32 groups[3] | u32 threads[3] | str params
//   | u32 nbind | nbind x (u32 buf, u64 offset, u32 align)),   str = u32 len + bytes.
// Reply (stdout): "TSR1" | nbuf x (u64 len, bytes). Errors: a line on stderr, exit status 1.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "library.metal"   // prelude + every kernel family, as shaders.Library() returns it
#include "selftest.metal"  // kernels that check the harness itself (not part of the library)

namespace {

struct Ids {
  uint3 group;          // threadgroup_position_in_grid
  uint3 tpos;           // thread_position_in_threadgroup
  uint3 tpg;            // threads_per_threadgroup
  uint3 grid;           // thread_position_in_grid
  uint index, lane, sg; // thread_index_in_threadgroup, thread_index_in_simdgroup, simdgroup_index_in_threadgroup
};

typedef void (*Entry)(void* const* b, const void* p, const Ids& i);

struct Kernel {
  const char* name;
  size_t params;  // sizeof the params struct
  unsigned buffers;
  Entry run;
};

uint2 xy(uint3 v) { return uint2{v.x, v.y}; }

// The registry: one entry per kernel of the library, binding buffer i to argument i.
const Kernel kKernels[] = {
    {"layer_norm", sizeof(LayerNormParams), 4,
     [](void* const* b, const void* p, const Ids& i) {
       layer_norm((float*)b[0], (const float*)b[1], (const uchar*)b[2], (const uchar*)b[3],
                  *(const LayerNormParams*)p, i.group.x, i.lane);
     }},
    {"rms_norm", sizeof(LayerNormParams), 3,
     [](void* const* b, const void* p, const Ids& i) {
       rms_norm((float*)b[0], (const float*)b[1], (const uchar*)b[2], *(const LayerNormParams*)p, i.group.x, i.lane);
     }},
    {"matmul_f32", sizeof(MatMulParams), 5,
     [](void* const* b, const void* p, const Ids& i) {
       matmul_f32((float*)b[0], (const float*)b[1], (const float*)b[2], (const uchar*)b[3], (float*)b[4],
                  *(const MatMulParams*)p, xy(i.group), i.index, i.sg);
     }},
    {"matmul_bf16", sizeof(MatMulParams), 5,
     [](void* const* b, const void* p, const Ids& i) {
       matmul_bf16((float*)b[0], (const float*)b[1], (const bfloat*)b[2], (const uchar*)b[3], (float*)b[4],
                  *(const MatMulParams*)p, xy(i.group), i.index, i.sg);
     }},
    {"matmul_f16", sizeof(MatMulParams), 5,
     [](void* const* b, const void* p, const Ids& i) {
       matmul_f16((float*)b[0], (const float*)b[1], (const half*)b[2], (const uchar*)b[3], (float*)b[4],
                  *(const MatMulParams*)p, xy(i.group), i.index, i.sg);
     }},
    {"matmul_f32_m32", sizeof(MatMulParams), 5,
     [](void* const* b, const void* p, const Ids& i) {
       matmul_f32_m32((float*)b[0], (const float*)b[1], (const float*)b[2], (const uchar*)b[3], (float*)b[4],
                      *(const MatMulParams*)p, xy(i.group), i.index, i.sg);
     }},
    {"matmul_bf16_m32", sizeof(MatMulParams), 5,
     [](void* const* b, const void* p, const Ids& i) {
       matmul_bf16_m32((float*)b[0], (const float*)b[1], (const bfloat*)b[2], (const uchar*)b[3], (float*)b[4],
                      *(const MatMulParams*)p, xy(i.group), i.index, i.sg);
     }},
    {"matmul_f16_m32", sizeof(MatMulParams), 5,
     [](void* const* b, const void* p, const Ids& i) {
       matmul_f16_m32((float*)b[0], (const float*)b[1], (const half*)b[2], (const uchar*)b[3], (float*)b[4],
                      *(const MatMulParams*)p, xy(i.group), i.index, i.sg);
     }},
    {"matmul_scalar_f32", sizeof(MatMulParams), 5,
     [](void* const* b, const void* p, const Ids& i) {
       matmul_scalar_f32((float*)b[0], (const float*)b[1], (const float*)b[2], (const uchar*)b[3], (float*)b[4],
                         *(const MatMulParams*)p, xy(i.group), i.index);
     }},
    {"matmul_scalar_bf16", sizeof(MatMulParams), 5,
     [](void* const* b, const void* p, const Ids& i) {
       matmul_scalar_bf16((float*)b[0], (const float*)b[1], (const bfloat*)b[2], (const uchar*)b[3], (float*)b[4],
                          *(const MatMulParams*)p, xy(i.group), i.index);
     }},
    {"matmul_scalar_f16", sizeof(MatMulParams), 5,
     [](void* const* b, const void* p, const Ids& i) {
       matmul_scalar_f16((float*)b[0], (const float*)b[1], (const half*)b[2], (const uchar*)b[3], (float*)b[4],
                         *(const MatMulParams*)p, xy(i.group), i.index);
     }},
    {"rope2d", sizeof(RopeParams), 3,
     [](void* const* b, const void* p, const Ids& i) {
       rope2d((float*)b[0], (const float*)b[1], (const float*)b[2], *(const RopeParams*)p, i.grid.x);
     }},
    {"attention", sizeof(AttentionParams), 4,
     [](void* const* b, const void* p, const Ids& i) {
       attention((float*)b[0], (const float*)b[1], (const float*)b[2], (const float*)b[3],
                 *(const AttentionParams*)p, xy(i.group), i.sg, i.lane);
     }},
    {"attention_hd16", sizeof(AttentionParams), 4,
     [](void* const* b, const void* p, const Ids& i) {
       attention_hd16((float*)b[0], (const float*)b[1], (const float*)b[2], (const float*)b[3],
                      *(const AttentionParams*)p, xy(i.group), i.index, i.sg, i.lane);
     }},
    {"attention_hd32", sizeof(AttentionParams), 4,
     [](void* const* b, const void* p, const Ids& i) {
       attention_hd32((float*)b[0], (const float*)b[1], (const float*)b[2], (const float*)b[3],
                      *(const AttentionParams*)p, xy(i.group), i.index, i.sg, i.lane);
     }},
    {"attention_hd64", sizeof(AttentionParams), 4,
     [](void* const* b, const void* p, const Ids& i) {
       attention_hd64((float*)b[0], (const float*)b[1], (const float*)b[2], (const float*)b[3],
                      *(const AttentionParams*)p, xy(i.group), i.index, i.sg, i.lane);
     }},
    {"attention_hd72", sizeof(AttentionParams), 4,
     [](void* const* b, const void* p, const Ids& i) {
       attention_hd72((float*)b[0], (const float*)b[1], (const float*)b[2], (const float*)b[3],
                      *(const AttentionParams*)p, xy(i.group), i.index, i.sg, i.lane);
     }},
    {"attention_hd80", sizeof(AttentionParams), 4,
     [](void* const* b, const void* p, const Ids& i) {
       attention_hd80((float*)b[0], (const float*)b[1], (const float*)b[2], (const float*)b[3],
                      *(const AttentionParams*)p, xy(i.group), i.index, i.sg, i.lane);
     }},
    {"attention_hd96", sizeof(AttentionParams), 4,
     [](void* const* b, const void* p, const Ids& i) {
       attention_hd96((float*)b[0], (const float*)b[1], (const float*)b[2], (const float*)b[3],
                      *(const AttentionParams*)p, xy(i.group), i.index, i.sg, i.lane);
     }},
    {"attention_hd128", sizeof(AttentionParams), 4,
     [](void* const* b, const void* p, const Ids& i) {
       attention_hd128((float*)b[0], (const float*)b[1], (const float*)b[2], (const float*)b[3],
                      *(const AttentionParams*)p, xy(i.group), i.index, i.sg, i.lane);
     }},
    {"gelu_tanh", sizeof(ElementwiseParams), 1,
     [](void* const* b, const void* p, const Ids& i) {
       gelu_tanh((float*)b[0], *(const ElementwiseParams*)p, i.grid.x);
     }},
    {"gelu_erf", sizeof(ElementwiseParams), 1,
     [](void* const* b, const void* p, const Ids& i) {
       gelu_erf((float*)b[0], *(const ElementwiseParams*)p, i.grid.x);
     }},
    {"gelu_quick", sizeof(ElementwiseParams), 1,
     [](void* const* b, const void* p, const Ids& i) {
       gelu_quick((float*)b[0], *(const ElementwiseParams*)p, i.grid.x);
     }},
    {"gelu_silu", sizeof(ElementwiseParams), 1,
     [](void* const* b, const void* p, const Ids& i) {
       gelu_silu((float*)b[0], *(const ElementwiseParams*)p, i.grid.x);
     }},
    {"mul_into", sizeof(ElementwiseParams), 2,
     [](void* const* b, const void* p, const Ids& i) {
       mul_into((float*)b[0], (const float*)b[1], *(const ElementwiseParams*)p, i.grid.x);
     }},
    {"fill_columns", sizeof(FillColumnsParams), 1,
     [](void* const* b, const void* p, const Ids& i) {
       fill_columns((float*)b[0], *(const FillColumnsParams*)p, i.grid.x);
     }},
    {"add_into", sizeof(ElementwiseParams), 2,
     [](void* const* b, const void* p, const Ids& i) {
       add_into((float*)b[0], (const float*)b[1], *(const ElementwiseParams*)p, i.grid.x);
     }},
    {"selftest_matrix_float", sizeof(ElementwiseParams), 4,
     [](void* const* b, const void* p, const Ids& i) {
       selftest_matrix_float((float*)b[0], (const float*)b[1], (const float*)b[2], (const float*)b[3],
                             *(const ElementwiseParams*)p, i.lane, i.sg);
     }},
    {"selftest_matrix_half", sizeof(ElementwiseParams), 4,
     [](void* const* b, const void* p, const Ids& i) {
       selftest_matrix_half((half*)b[0], (const half*)b[1], (const half*)b[2], (const half*)b[3],
                            *(const ElementwiseParams*)p, i.lane, i.sg);
     }},
    {"selftest_matrix_bfloat", sizeof(ElementwiseParams), 4,
     [](void* const* b, const void* p, const Ids& i) {
       selftest_matrix_bfloat((bfloat*)b[0], (const bfloat*)b[1], (const bfloat*)b[2], (const bfloat*)b[3],
                              *(const ElementwiseParams*)p, i.lane, i.sg);
     }},
    {"selftest_matrix_lane_dependent_source", sizeof(ElementwiseParams), 1,
     [](void* const* b, const void* p, const Ids& i) {
       selftest_matrix_lane_dependent_source((float*)b[0], *(const ElementwiseParams*)p, i.lane);
     }},
    {"selftest_matrix_load_without_barrier", sizeof(ElementwiseParams), 1,
     [](void* const* b, const void* p, const Ids& i) {
       selftest_matrix_load_without_barrier((float*)b[0], *(const ElementwiseParams*)p, i.index, i.sg);
     }},
    {"selftest_early_exit_before_barrier", sizeof(ElementwiseParams), 1,
     [](void* const* b, const void* p, const Ids& i) {
       selftest_early_exit_before_barrier((float*)b[0], *(const ElementwiseParams*)p, i.index);
     }},
    {"selftest_reverse_through_threadgroup", sizeof(ElementwiseParams), 1,
     [](void* const* b, const void* p, const Ids& i) {
       selftest_reverse_through_threadgroup((float*)b[0], *(const ElementwiseParams*)p, i.index, i.tpg.x);
     }},
};

[[noreturn]] void fail(const std::string& msg) {
  std::fprintf(stderr, "driver: %s\n", msg.c_str());
  std::exit(1);
}

// ---- reading the job ----

struct Reader {
  FILE* f;
  void bytes(void* dst, size_t n) {
    if (n != 0 && std::fread(dst, 1, n, f) != n) fail("job truncated");
  }
  uint32_t u32() {
    unsigned char b[4];
    bytes(b, 4);
    return uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
  }
  uint64_t u64() {
    uint64_t lo = u32();
    return lo | uint64_t(u32()) << 32;
  }
  std::string str() {
    std::string s(u32(), '\0');
    bytes(s.data(), s.size());
    return s;
  }
};

// A buffer whose last byte touches a PROT_NONE page (its start 16-byte aligned).
struct Buffer {
  unsigned char* data = nullptr;
  uint64_t len = 0;
  bool read_only = false;
};

const char* g_kernel = "";  // for the crash message

void on_crash(int sig) {
  char msg[256];
  int n = std::snprintf(msg, sizeof msg,
                        "driver: signal %d in kernel %s: a read or write outside its buffers, or a write to a weight\n",
                        sig, g_kernel);
  if (n > 0) (void)!write(2, msg, size_t(n));
  _exit(1);
}

Buffer guarded(uint64_t len) {
  const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
  const uint64_t body = (len + 15) / 16 * 16;
  const uint64_t total = (body + page - 1) / page * page + page;
  void* m = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) fail("mmap of a buffer failed");
  unsigned char* guard = static_cast<unsigned char*>(m) + total - page;
  if (mprotect(guard, page, PROT_NONE) != 0) fail("mprotect of a guard page failed");
  Buffer b;
  b.data = guard - body;
  b.len = len;
  return b;
}

void protect_read_only(const Buffer& b) {
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  uintptr_t start = uintptr_t(b.data) / page * page;
  uintptr_t end = uintptr_t(b.data) + (b.len + 15) / 16 * 16;
  if (mprotect(reinterpret_cast<void*>(start), end - start, PROT_READ) != 0) fail("mprotect read-only failed");
}

const Kernel& find(const std::string& name) {
  for (const Kernel& k : kKernels) {
    if (name == k.name) return k;
  }
  fail("no kernel named " + name);
}

// ---- running a dispatch ----

struct Dispatch {
  std::string name, params;  // (not "kernel": the shim defines that away)
  uint32_t groups[3], threads[3];
  std::vector<void*> args;
};

void run_dispatch(const Dispatch& d) {
  const Kernel& k = find(d.name);
  g_kernel = k.name;
  if (d.params.size() != k.params) {
    fail(d.name + ": params of " + std::to_string(d.params.size()) + " bytes, the kernel's struct has " +
         std::to_string(k.params));
  }
  if (d.args.size() != k.buffers) {
    fail(d.name + ": " + std::to_string(d.args.size()) + " buffers bound, the kernel takes " +
         std::to_string(k.buffers));
  }
  const unsigned n = d.threads[0] * d.threads[1] * d.threads[2];
  if (n == 0 || n > 1024) fail(d.name + ": threads per threadgroup must be 1..1024");
  // The params live in their own aligned copy, as setBytes gives the kernel.
  std::vector<uint64_t> params((d.params.size() + 7) / 8 + 1);
  std::memcpy(params.data(), d.params.data(), d.params.size());
  static harness::Threadgroup tg;  // reused: its fiber stacks are allocated once
  Ids ids{};
  ids.tpg = uint3{d.threads[0], d.threads[1], d.threads[2]};
  for (uint32_t gz = 0; gz < d.groups[2]; ++gz) {
    for (uint32_t gy = 0; gy < d.groups[1]; ++gy) {
      for (uint32_t gx = 0; gx < d.groups[0]; ++gx) {
        ids.group = uint3{gx, gy, gz};
        std::string err = tg.run(n, [&](const harness::Thread& t) {
          Ids mine = ids;
          mine.index = t.index;
          mine.lane = t.lane;
          mine.sg = t.simdgroup;
          // x varies fastest, as Metal linearizes thread_index_in_threadgroup.
          mine.tpos = uint3{t.index % d.threads[0], t.index / d.threads[0] % d.threads[1],
                            t.index / (d.threads[0] * d.threads[1])};
          mine.grid = uint3{gx * d.threads[0] + mine.tpos.x, gy * d.threads[1] + mine.tpos.y,
                            gz * d.threads[2] + mine.tpos.z};
          k.run(d.args.data(), params.data(), mine);
        });
        if (!err.empty()) {
          fail(d.name + ": threadgroup (" + std::to_string(gx) + "," + std::to_string(gy) + "," +
               std::to_string(gz) + "): " + err);
        }
      }
    }
  }
}

void write_all(const void* p, size_t n) {
  if (n != 0 && std::fwrite(p, 1, n, stdout) != n) fail("writing the reply failed");
}

void write_u64(uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
  write_all(b, 8);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--list") == 0) {
    for (const Kernel& k : kKernels) std::printf("%s\n", k.name);
    return 0;
  }
  signal(SIGSEGV, on_crash);
  signal(SIGBUS, on_crash);
  Reader r{stdin};
  char magic[4];
  r.bytes(magic, 4);
  if (std::memcmp(magic, "TSJ1", 4) != 0) fail("not a job (magic)");
  harness::g_mutant = r.str();
  std::vector<Buffer> bufs(r.u32());
  for (Buffer& b : bufs) {
    uint32_t flags = r.u32();
    b = guarded(r.u64());
    r.bytes(b.data, b.len);
    b.read_only = (flags & 1) != 0;
    if (b.read_only) protect_read_only(b);
  }
  std::vector<Dispatch> dispatches(r.u32());
  for (Dispatch& d : dispatches) {
    d.name = r.str();
    for (uint32_t& g : d.groups) g = r.u32();
    for (uint32_t& t : d.threads) t = r.u32();
    d.params = r.str();
    const uint32_t nbind = r.u32();
    for (uint32_t i = 0; i < nbind; ++i) {
      const uint32_t buf = r.u32();
      const uint64_t off = r.u64();
      const uint32_t align = r.u32();
      if (buf >= bufs.size()) fail(d.name + ": binding to buffer " + std::to_string(buf) + " of " + std::to_string(bufs.size()));
      if (off > bufs[buf].len) fail(d.name + ": binding offset past the end of its buffer");
      if (align == 0 || off % align != 0) fail(d.name + ": binding offset " + std::to_string(off) + " not a multiple of " + std::to_string(align));
      d.args.push_back(bufs[buf].data + off);
    }
  }
  for (const Dispatch& d : dispatches) run_dispatch(d);
  write_all("TSR1", 4);
  for (const Buffer& b : bufs) {
    write_u64(b.len);
    write_all(b.data, b.len);
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}
