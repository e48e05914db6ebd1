// The Python frame reader (libprof/backtrace/python_frames.h) against frames built in memory
// for each CPython layout it supports (python_layouts.h): the walk, names, lines, what it skips,
// and how it stops on memory that does not match. The real interpreters are tested by
// python_frames_test.py.
#include <sys/mman.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "libprof/backtrace/python_frame_cache.h"
#include "libprof/backtrace/python_frames.h"

namespace libprof {
namespace {

// Stand-ins for the interpreter's type objects: only their addresses are compared.
alignas(16) char code_type[64];
alignas(16) char str_type[64];
alignas(16) char frame_type[64];

const void* thread_state = nullptr;  // what PyGILState_GetThisThreadState answers
int initialized = 1;

int FakeIsInitialized() { return initialized; }
void* FakeThisThreadState() { return const_cast<void*>(thread_state); }
// A line that tells which byte offset the reader asked for.
int FakeAddr2Line(void*, int byte_offset) { return 1000 + byte_offset; }

// Builds CPython objects of one layout in zeroed, aligned memory.
class FakeInterpreter {
 public:
  explicit FakeInterpreter(const PythonLayout& layout) : layout_(layout) {
    state_ = Block(256);
    if (layout.cframe_current >= 0) {
      cframe_ = Block(64);
      Put(state_, layout.thread_frame, cframe_);
    }
    thread_state = state_;
    initialized = 1;
  }
  ~FakeInterpreter() { thread_state = nullptr; }

  PythonRuntime Runtime() const {
    PythonRuntime runtime;
    runtime.Py_IsInitialized = &FakeIsInitialized;
    runtime.PyGILState_GetThisThreadState = &FakeThisThreadState;
    runtime.PyCode_Addr2Line = &FakeAddr2Line;
    runtime.code_type = code_type;
    runtime.str_type = str_type;
    runtime.frame_type = frame_type;
    runtime.layout = &layout_;
    return runtime;
  }

  // A compact str of these code points: ASCII, or of the smallest kind that holds them.
  char* Str(std::u32string_view text, bool compact = true) {
    uint32_t kind = 1;
    bool ascii = true;
    for (char32_t c : text) {
      ascii = ascii && c < 0x80;
      if (c > 0xFF) kind = std::max<uint32_t>(kind, 2);
      if (c > 0xFFFF) kind = 4;
    }
    const int header = ascii ? layout_.ascii_header : layout_.compact_header;
    char* str = Block(static_cast<size_t>(header) + (text.size() + 1) * kind);
    Put(str, 8, static_cast<const void*>(str_type));
    Put(str, layout_.str_length, static_cast<ptrdiff_t>(text.size()));
    uint32_t state = (compact ? layout_.state_compact : 0) | layout_.state_ready |
                     (ascii ? layout_.state_ascii : 0) | (kind << layout_.state_kind_shift);
    Put(str, layout_.str_state, state);
    for (size_t i = 0; i < text.size(); ++i) {
      const uint32_t c = text[i];
      std::memcpy(str + header + i * kind, &c, kind);  // little-endian: the low bytes
    }
    return str;
  }
  char* Str(std::string_view ascii) { return Str(std::u32string(ascii.begin(), ascii.end())); }

  char* Code(char* file, char* name, int code_units = 100, int first_traceable = 0) {
    const int size = std::max(layout_.code_basicsize, layout_.code_adaptive) + 2 * code_units;
    char* code = Block(static_cast<size_t>(size));
    Put(code, 8, static_cast<const void*>(code_type));
    Put(code, layout_.code_filename, static_cast<const void*>(file));
    Put(code, layout_.code_name, static_cast<const void*>(name));
    if (layout_.code_adaptive >= 0) {
      Put(code, 16, static_cast<ptrdiff_t>(code_units));  // Py_SIZE
      Put(code, layout_.code_firsttraceable, first_traceable);
    }
    return code;
  }

  // A frame of `code` executing at `byte_offset`, called from `previous`.
  char* Frame(char* code, int byte_offset, const char* previous, char owner = 0) {
    char* frame = Block(256);
    Put(frame, layout_.frame_code, static_cast<const void*>(code));
    Put(frame, layout_.frame_previous, static_cast<const void*>(previous));
    if (layout_.frame_lasti >= 0) {
      Put(frame, 8, static_cast<const void*>(frame_type));
      Put(frame, layout_.frame_lasti, byte_offset / layout_.lasti_unit);
    } else {
      Put(frame, layout_.frame_instr,
          static_cast<const void*>(code + layout_.code_adaptive + byte_offset));
      Put(frame, layout_.frame_owner, owner);
    }
    return frame;
  }

  void SetInnermost(const char* frame) {
    if (cframe_ != nullptr) {
      Put(cframe_, layout_.cframe_current, static_cast<const void*>(frame));
    } else {
      Put(state_, layout_.thread_frame, static_cast<const void*>(frame));
    }
  }

  template <typename T>
  static void Put(char* base, int offset, T value) {
    std::memcpy(base + offset, &value, sizeof value);
  }

 private:
  char* Block(size_t size) {
    blocks_.push_back(std::make_unique<uint64_t[]>((size + 7) / 8 + 1));
    return reinterpret_cast<char*>(blocks_.back().get());
  }

  const PythonLayout& layout_;
  std::vector<std::unique_ptr<uint64_t[]>> blocks_;
  char* state_ = nullptr;
  char* cframe_ = nullptr;
};

struct Read {
  std::string file, function;
  uint32_t line;
  bool operator==(const Read&) const = default;
};
std::vector<Read> ReadAll(const PythonFrameReader& reader, size_t max_frames = 64) {
  std::vector<Read> out;
  const size_t n = reader.ReadText(max_frames, [&](const PythonFrameView& f) {
    out.push_back({std::string(f.file), std::string(f.function), f.line});
  });
  EXPECT_EQ(n, out.size());
  return out;
}

class PythonLayoutTest : public testing::TestWithParam<PythonLayout> {};

std::string LayoutName(const testing::TestParamInfo<PythonLayout>& info) {
  return "CPython3_" + std::to_string(info.param.minor);
}

// Proves the walk: innermost first, each frame's file, qualified name, and the line of the byte
// offset it executes (in the version's own unit: f_lasti bytes, f_lasti code units, or an
// instruction pointer into the code object's bytecode).
TEST_P(PythonLayoutTest, WalksInnermostFirstWithNamesAndLines) {
  FakeInterpreter python(GetParam());
  char* train = python.Str("train.py");
  char* module = python.Frame(python.Code(train, python.Str("<module>")), 0, nullptr);
  char* step = python.Frame(python.Code(train, python.Str("step")), 42, module);
  char* forward =
      python.Frame(python.Code(python.Str("/m/model.py"), python.Str("Model.forward")), 6, step);
  python.SetInnermost(forward);
  PythonFrameReader reader(python.Runtime());
  EXPECT_EQ(ReadAll(reader), (std::vector<Read>{{"/m/model.py", "Model.forward", 1006},
                                                 {"train.py", "step", 1042},
                                                 {"train.py", "<module>", 1000}}));
  EXPECT_EQ(ReadAll(reader, 2).size(), 2u);
  EXPECT_FALSE(reader.stopped());
}

// Proves a thread without Python, or an interpreter not (or no longer) initialised, reads nothing.
TEST_P(PythonLayoutTest, NoThreadStateOrNoInterpreterReadsNothing) {
  FakeInterpreter python(GetParam());
  python.SetInnermost(python.Frame(python.Code(python.Str("a.py"), python.Str("f")), 0, nullptr));
  PythonFrameReader reader(python.Runtime());
  EXPECT_EQ(ReadAll(reader).size(), 1u);
  initialized = 0;
  EXPECT_TRUE(ReadAll(reader).empty());
  initialized = 1;
  thread_state = nullptr;
  EXPECT_TRUE(ReadAll(reader).empty());
  EXPECT_FALSE(reader.stopped());
}

// Proves names that are not ASCII come out as UTF-8 from each str kind (Latin-1, UCS-2, UCS-4),
// long names are cut on a character boundary, and a str that is not compact is shown as "?".
TEST_P(PythonLayoutTest, NamesOfEveryStrKind) {
  FakeInterpreter python(GetParam());
  char* file = python.Str(U"/données/π.py");
  char* f1 = python.Frame(python.Code(file, python.Str(U"naïve")), 0, nullptr);
  char* f2 = python.Frame(python.Code(file, python.Str(U"𝄞_clef")), 0, f1);
  char* f3 = python.Frame(python.Code(file, python.Str(U"legacy", /*compact=*/false)), 0, f2);
  const std::u32string long_name(300, U'λ');
  char* f4 = python.Frame(python.Code(python.Str(std::string(2000, 'x')), python.Str(long_name)),
                          0, f3);
  python.SetInnermost(f4);
  PythonFrameReader reader(python.Runtime());
  const std::vector<Read> frames = ReadAll(reader);
  ASSERT_EQ(frames.size(), 4u);
  EXPECT_EQ(frames[0].file.size(), PythonFrameText::kMaxFileBytes);
  EXPECT_EQ(frames[0].function.size(), PythonFrameText::kMaxFunctionBytes);  // λ is 2 bytes
  EXPECT_EQ(frames[0].function.substr(0, 4), "λλ");
  EXPECT_EQ(frames[1].function, "?");
  EXPECT_EQ(frames[2].function, "𝄞_clef");
  EXPECT_EQ(frames[3].function, "naïve");
  EXPECT_EQ(frames[3].file, "/données/π.py");
}

// Proves what CPython itself does not show is skipped: the C entry shim (3.12+) and a frame that
// has not reached its first traceable instruction, and (3.13) a frame whose executable is not a
// code object; a generator's frame is shown.
TEST_P(PythonLayoutTest, SkipsShimsAndFramesNotStarted) {
  const PythonLayout& layout = GetParam();
  if (layout.frame_owner < 0) GTEST_SKIP() << "3.9-3.10 frames are objects without an owner";
  FakeInterpreter python(layout);
  char* file = python.Str("g.py");
  char* outer = python.Frame(python.Code(file, python.Str("outer")), 10, nullptr);
  char* shim = outer;
  if (layout.owner_cstack >= 0) {
    shim = python.Frame(python.Code(file, python.Str("<shim>")), 0, outer,
                        static_cast<char>(layout.owner_cstack));
  }
  char* not_started = python.Frame(python.Code(file, python.Str("starting"), 100, 4), 2, shim);
  char* generator = python.Frame(python.Code(file, python.Str("gen"), 100, 4), 2, not_started,
                                 static_cast<char>(layout.owner_generator));
  char* innermost = generator;
  if (layout.minor >= 13) {  // f_executable of a frame that runs no Python code
    innermost = python.Frame(python.Str("not code"), 0, generator);
  }
  python.SetInnermost(innermost);
  PythonFrameReader reader(python.Runtime());
  EXPECT_EQ(ReadAll(reader), (std::vector<Read>{{"g.py", "gen", 1002}, {"g.py", "outer", 1010}}));
  EXPECT_FALSE(reader.stopped());
}

// Proves memory that does not match the layout stops the reader for good instead of being
// followed: a code object whose file name is not a str, and (while loads are checked) a frame in memory
// that is not mapped, which would crash a plain load.
TEST_P(PythonLayoutTest, MismatchStopsTheReaderForGood) {
  FakeInterpreter python(GetParam());
  char* good = python.Frame(python.Code(python.Str("a.py"), python.Str("f")), 0, nullptr);
  char* not_a_str = python.Str("a.py");
  FakeInterpreter::Put(not_a_str, 8, static_cast<const void*>(code_type));
  python.SetInnermost(python.Frame(python.Code(not_a_str, python.Str("g")), 0, good));
  PythonFrameReader reader(python.Runtime());
  EXPECT_TRUE(ReadAll(reader).empty());
  EXPECT_TRUE(reader.stopped());
  python.SetInnermost(good);
  EXPECT_TRUE(ReadAll(reader).empty());

  const long page = sysconf(_SC_PAGESIZE);
  void* unmapped = mmap(nullptr, static_cast<size_t>(page), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(unmapped, MAP_FAILED);
  ASSERT_EQ(munmap(unmapped, static_cast<size_t>(page)), 0);
  PythonFrameReader fresh(python.Runtime());
  ASSERT_TRUE(fresh.checking());
  python.SetInnermost(python.Frame(python.Code(python.Str("b.py"), python.Str("h")), 0,
                                   static_cast<const char*>(unmapped)));
  EXPECT_EQ(ReadAll(fresh).size(), 1u);  // the frame before the bad one
  EXPECT_TRUE(fresh.stopped());
}

// Proves the checks end after kCheckedFrames good frames and plain loads read the same.
TEST_P(PythonLayoutTest, ChecksEndAfterGoodFrames) {
  FakeInterpreter python(GetParam());
  char* frame = python.Frame(python.Code(python.Str("a.py"), python.Str("f")), 8, nullptr);
  python.SetInnermost(frame);
  PythonFrameReader reader(python.Runtime());
  for (int i = 0; i < PythonFrameReader::kCheckedFrames; ++i) {
    ASSERT_TRUE(reader.checking()) << i;
    ASSERT_EQ(ReadAll(reader).size(), 1u);
  }
  EXPECT_FALSE(reader.checking());
  EXPECT_EQ(ReadAll(reader), (std::vector<Read>{{"a.py", "f", 1008}}));
}

// Proves the cache serves a frame seen before without reading its text (a name made unreadable
// after the first walk goes unnoticed through the cache, and stops a reader without one), and
// that another code object at the same address with another name, or another offset, is read.
TEST_P(PythonLayoutTest, CacheServesFramesSeenBefore) {
  FakeInterpreter python(GetParam());
  char* name = python.Str("step");
  char* code = python.Code(python.Str("t.py"), name);
  char* outer = python.Frame(python.Code(python.Str("t.py"), python.Str("<module>")), 0, nullptr);
  char* frame = python.Frame(code, 4, outer);
  python.SetInnermost(frame);
  PythonFrameReader reader(python.Runtime());
  PythonFrameTable table(100);
  PythonFrameCache cache;
  uint32_t ids[8], again[8];
  bool cut = false;
  ASSERT_EQ(InternPythonFrames(reader, &cache, table, ids, 8, &cut), 2u);
  FakeInterpreter::Put(name, 8, static_cast<const void*>(code_type));  // no longer a str
  ASSERT_EQ(InternPythonFrames(reader, &cache, table, again, 8, &cut), 2u);
  EXPECT_EQ(std::vector<uint32_t>(again, again + 2), std::vector<uint32_t>(ids, ids + 2));
  EXPECT_FALSE(reader.stopped());

  // The same address, another name object: read (and a new frame); another offset: read too.
  FakeInterpreter::Put(code, GetParam().code_name, static_cast<const void*>(python.Str("other")));
  EXPECT_EQ(InternPythonFrames(reader, &cache, table, again, 8, &cut), 2u);
  EXPECT_EQ(table.Get(again[0]).function, "other");
  python.SetInnermost(python.Frame(code, 8, outer));
  EXPECT_EQ(InternPythonFrames(reader, &cache, table, again, 8, &cut), 2u);
  EXPECT_EQ(table.Get(again[0]), (PythonFrameTable::Frame{"t.py", "other", 1008}));
  EXPECT_EQ(table.size(), 4u);

  // The thread's cache is asked for once a walk shows a frame, never by a thread without Python.
  int asked = 0;
  auto counted = [&] {
    ++asked;
    return &cache;
  };
  EXPECT_EQ(InternPythonFrames(reader, counted, table, again, 8, &cut), 2u);
  EXPECT_EQ(asked, 1);
  const void* state = thread_state;
  thread_state = nullptr;
  EXPECT_EQ(InternPythonFrames(reader, counted, table, again, 8, &cut), 0u);
  EXPECT_EQ(asked, 1);
  thread_state = state;

  // Without a cache the unreadable name stops the reader; a full table cuts the outer frames.
  FakeInterpreter::Put(code, GetParam().code_name, static_cast<const void*>(name));
  PythonFrameTable small(1);
  PythonFrameReader fresh(python.Runtime());
  python.SetInnermost(frame);
  FakeInterpreter::Put(name, 8, static_cast<const void*>(str_type));
  EXPECT_EQ(InternPythonFrames(fresh, nullptr, small, ids, 8, &cut), 1u);
  EXPECT_TRUE(cut);
  FakeInterpreter::Put(name, 8, static_cast<const void*>(code_type));
  EXPECT_EQ(InternPythonFrames(fresh, nullptr, table, ids, 8, &cut), 0u);
  EXPECT_TRUE(fresh.stopped());
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, PythonLayoutTest, testing::ValuesIn(kPythonLayouts),
                         LayoutName);

// Proves the table has a row for each supported version and none for others.
TEST(PythonLayoutsTest, OneRowPerSupportedVersion) {
  for (int minor = 9; minor <= 13; ++minor) {
    ASSERT_NE(FindPythonLayout(minor), nullptr) << minor;
    EXPECT_EQ(FindPythonLayout(minor)->minor, minor);
  }
  EXPECT_EQ(FindPythonLayout(8), nullptr);
  EXPECT_EQ(FindPythonLayout(14), nullptr);
}

}  // namespace
}  // namespace libprof
