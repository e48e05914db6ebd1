#include "libprof/backtrace/python_frame_cache.h"

namespace libprof {

size_t InternPythonFrames(const PythonFrameReader& reader, PythonFrameCache* cache,
                          PythonFrameTable& table, uint32_t* ids, size_t max, bool* cut) {
  size_t n = 0;
  *cut = false;
  reader.Read(max, [&](const PythonFrameRef& frame) {
    if (*cut) return;
    uint32_t id = cache != nullptr ? cache->Find(frame.key()) : 0;
    if (id == 0) {
      PythonFrameView text;
      if (!frame.Text(&text)) return;  // the reader stopped: the walk ends here
      id = table.Intern(text.file, text.function, text.line);
      if (id == 0) {
        *cut = true;
        return;
      }
      if (cache != nullptr) cache->Put(frame.key(), id);
    }
    ids[n++] = id;
  });
  return n;
}

}  // namespace libprof
