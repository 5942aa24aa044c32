//===- DiskCache.cpp - Compiled functions kept across processes -----------===//

#include "engine/DiskCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/EndianStream.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/TargetParser/Host.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstring>

#define DEBUG_TYPE "kcc-disk-cache"

using namespace kcc;
namespace json = llvm::json;

namespace {

constexpr llvm::StringLiteral kMagic = "KCCCACHE";
/// magic, version, reserved, metadata size, object size, checksum.
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 8 + 8 + 8;

llvm::Error corrupt(const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}

/// The GNU build ID (hex) of the loaded binary, executable or shared
/// library, whose code holds this function; empty when it has none.
std::string buildIdOfThisBinary() {
  struct Search {
    uintptr_t address;
    std::string id;
  } search{reinterpret_cast<uintptr_t>(&buildIdOfThisBinary), {}};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) -> int {
        auto *s = static_cast<Search *>(data);
        bool holds = false;
        for (int i = 0; i < info->dlpi_phnum && !holds; ++i) {
          const ElfW(Phdr) &ph = info->dlpi_phdr[i];
          uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
          holds = ph.p_type == PT_LOAD && s->address >= begin &&
                  s->address < begin + ph.p_memsz;
        }
        if (!holds)
          return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_NOTE)
            continue;
          const char *p =
              reinterpret_cast<const char *>(info->dlpi_addr + ph.p_vaddr);
          const char *end = p + ph.p_memsz;
          while (p + sizeof(ElfW(Nhdr)) <= end) {
            const auto *note = reinterpret_cast<const ElfW(Nhdr) *>(p);
            const char *name = p + sizeof(ElfW(Nhdr));
            const char *desc = name + llvm::alignTo(note->n_namesz, 4);
            if (desc + note->n_descsz > end)
              break;
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
                std::memcmp(name, "GNU", 4) == 0) {
              s->id = llvm::toHex(llvm::StringRef(desc, note->n_descsz),
                                  /*LowerCase=*/true);
              return 1;
            }
            p = desc + llvm::alignTo(note->n_descsz, 4);
          }
        }
        return 1;
      },
      &search);
  return search.id;
}

/// Identifies the compiler's code: its build ID, else the size and the
/// modification time of the binary that holds it.
std::string buildIdentity() {
  std::string id = buildIdOfThisBinary();
  if (!id.empty())
    return "build-id:" + id;
  Dl_info info;
  llvm::sys::fs::file_status status;
  if (dladdr(reinterpret_cast<void *>(&buildIdentity), &info) &&
      info.dli_fname && !llvm::sys::fs::status(info.dli_fname, status)) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "file:" << info.dli_fname << ":" << status.getSize() << ":"
       << status.getLastModificationTime().time_since_epoch().count();
    return s;
  }
  // Nothing identifies the build: one key per compile of this file.
  return "built:" __DATE__ " " __TIME__;
}

// ---- Metadata as JSON ------------------------------------------------------

json::Array specsToJSON(const std::vector<TensorSpec> &specs) {
  json::Array out;
  for (const TensorSpec &s : specs)
    out.push_back(json::Object{{"shape", json::Array(s.shape)},
                               {"dtype", dtypeName(s.dtype)}});
  return out;
}

std::optional<DType> dtypeNamed(llvm::StringRef name) {
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I1,
                  DType::I32, DType::I64})
    if (name == dtypeName(t))
      return t;
  return std::nullopt;
}

/// Reads what metadataJSON wrote; each getter names the field it missed.
class MetadataReader {
public:
  explicit MetadataReader(const json::Object &o) : o_(o) {}

  llvm::Error error() {
    return problem_.empty() ? llvm::Error::success()
                            : corrupt("metadata: " + problem_);
  }

  std::string string(llvm::StringRef field) {
    if (std::optional<llvm::StringRef> s = o_.getString(field))
      return s->str();
    fail(field);
    return {};
  }

  int64_t integer(const json::Object &o, llvm::StringRef field,
                  int64_t min = 0) {
    std::optional<int64_t> v = o.getInteger(field);
    if (!v || *v < min) {
      fail(field);
      return min;
    }
    return *v;
  }
  int64_t integer(llvm::StringRef field) { return integer(o_, field); }

  std::vector<TensorSpec> specs(llvm::StringRef field) {
    std::vector<TensorSpec> out;
    const json::Array *a = o_.getArray(field);
    if (!a) {
      fail(field);
      return out;
    }
    for (const json::Value &v : *a) {
      const json::Object *spec = v.getAsObject();
      const json::Array *shape = spec ? spec->getArray("shape") : nullptr;
      std::optional<llvm::StringRef> dtype =
          spec ? spec->getString("dtype") : std::nullopt;
      std::optional<DType> type = dtype ? dtypeNamed(*dtype) : std::nullopt;
      if (!shape || !type) {
        fail(field);
        return out;
      }
      TensorSpec s;
      s.dtype = *type;
      for (const json::Value &d : *shape) {
        std::optional<int64_t> dim = d.getAsInteger();
        if (!dim || *dim < 0) {
          fail(field);
          return out;
        }
        s.shape.push_back(*dim);
      }
      out.push_back(std::move(s));
    }
    return out;
  }

  std::vector<std::pair<unsigned, unsigned>>
  pairs(llvm::StringRef field, size_t results, size_t args) {
    std::vector<std::pair<unsigned, unsigned>> out;
    const json::Array *a = o_.getArray(field);
    if (!a) {
      fail(field);
      return out;
    }
    for (const json::Value &v : *a) {
      const json::Array *pair = v.getAsArray();
      std::optional<int64_t> r, g;
      if (pair && pair->size() == 2) {
        r = (*pair)[0].getAsInteger();
        g = (*pair)[1].getAsInteger();
      }
      if (!r || !g || *r < 0 || *g < 0 || static_cast<size_t>(*r) >= results ||
          static_cast<size_t>(*g) >= args) {
        fail(field);
        return out;
      }
      out.emplace_back(*r, *g);
    }
    return out;
  }

  const json::Object *object(llvm::StringRef field) {
    const json::Object *o = o_.getObject(field);
    if (!o)
      fail(field);
    return o;
  }

  void fail(llvm::StringRef field) {
    if (problem_.empty())
      problem_ = "missing or malformed '" + field.str() + "'";
  }

private:
  const json::Object &o_;
  std::string problem_;
};

std::string metadataJSON(llvm::StringRef key, const CompiledArtifact &a) {
  json::Array inPlace;
  for (auto [result, arg] : a.inPlace)
    inPlace.push_back(json::Array{result, arg});
  json::Object o{
      {"key", key},
      {"name", a.name},
      {"args", specsToJSON(a.args)},
      {"results", specsToJSON(a.results)},
      {"in_place", std::move(inPlace)},
      {"kernels", json::Object{{"library_calls", a.kernels.libraryCalls},
                               {"loop_nests", a.kernels.loopNests}}},
      {"arena_arg", a.arenaArg},
  };
  json::Array objectBytes;
  for (const std::string &object : a.objects)
    objectBytes.push_back(static_cast<int64_t>(object.size()));
  o["object_bytes"] = std::move(objectBytes);
  if (a.plan)
    o["plan"] = json::Object{{"alignment", a.plan->alignment},
                             {"arena_bytes", a.plan->arenaBytes},
                             {"lower_bound_bytes", a.plan->lowerBoundBytes},
                             {"sum_bytes", a.plan->sumBytes},
                             {"num_buffers", a.plan->numBuffers}};
  std::string text;
  llvm::raw_string_ostream(text) << json::Value(std::move(o));
  return text;
}

llvm::Error readMetadata(llvm::StringRef text, llvm::StringRef key,
                         CompiledArtifact &a,
                         std::vector<uint64_t> &objectBytes) {
  llvm::Expected<json::Value> value = json::parse(text);
  if (!value)
    return corrupt("metadata: " + llvm::toString(value.takeError()));
  const json::Object *o = value->getAsObject();
  if (!o)
    return corrupt("metadata: not a JSON object");
  MetadataReader r(*o);
  if (r.string("key") != key)
    return corrupt("another key (a hash collision)");
  a.name = r.string("name");
  a.args = r.specs("args");
  a.results = r.specs("results");
  a.inPlace = r.pairs("in_place", a.results.size(), a.args.size());
  if (const json::Object *k = r.object("kernels")) {
    a.kernels.libraryCalls = r.integer(*k, "library_calls");
    a.kernels.loopNests = r.integer(*k, "loop_nests");
  }
  std::optional<bool> arenaArg = o->getBoolean("arena_arg");
  if (!arenaArg)
    r.fail("arena_arg");
  a.arenaArg = arenaArg.value_or(false);
  if (const json::Object *p = o->getObject("plan")) {
    MemoryPlanReport plan;
    plan.alignment = r.integer(*p, "alignment", 1);
    plan.arenaBytes = r.integer(*p, "arena_bytes");
    plan.lowerBoundBytes = r.integer(*p, "lower_bound_bytes");
    plan.sumBytes = r.integer(*p, "sum_bytes");
    plan.numBuffers = r.integer(*p, "num_buffers");
    a.plan = plan;
  } else if (a.arenaArg) {
    r.fail("plan");
  }
  if (const json::Array *sizes = o->getArray("object_bytes")) {
    for (const json::Value &size : *sizes) {
      if (std::optional<int64_t> n = size.getAsInteger(); n && *n > 0)
        objectBytes.push_back(*n);
      else
        r.fail("object_bytes");
    }
  }
  if (objectBytes.empty())
    r.fail("object_bytes");
  return r.error();
}

} // namespace

// ---- DiskCache -------------------------------------------------------------

std::optional<std::string> DiskCache::folderFromEnvironment() {
  if (const char *dir = std::getenv("KCC_CACHE_DIR")) {
    llvm::StringRef d(dir);
    if (d.empty() || d.equals_insensitive("off"))
      return std::nullopt;
    return d.str();
  }
  llvm::SmallString<128> path;
  if (!llvm::sys::path::cache_directory(path))
    return std::nullopt;
  llvm::sys::path::append(path, "kcc");
  return std::string(path);
}

const std::string &DiskCache::environmentKey() {
  static const std::string key = [] {
    // Sorted, so the order the host reports them in does not matter.
    std::vector<std::string> features;
    for (const auto &f : llvm::sys::getHostCPUFeatures())
      features.push_back((f.getValue() ? "+" : "-") + f.getKey().str());
    std::sort(features.begin(), features.end());
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "kcc " KCC_VERSION " (" << buildIdentity()
       << ")|LLVM " LLVM_VERSION_STRING "|" << llvm::sys::getProcessTriple()
       << "|" << llvm::sys::getHostCPUName() << "|"
       << llvm::join(features, ",");
    return s;
  }();
  return key;
}

DiskCache::DiskCache(std::string folder) : folder_(std::move(folder)) {}

std::string DiskCache::pathFor(llvm::StringRef key) const {
  std::string full = (key + "|" + environmentKey()).str();
  llvm::XXH128_hash_t h = llvm::xxh3_128bits(llvm::arrayRefFromStringRef(full));
  std::string name;
  llvm::raw_string_ostream(name)
      << llvm::format_hex_no_prefix(h.high64, 16)
      << llvm::format_hex_no_prefix(h.low64, 16) << ".kcc";
  llvm::SmallString<256> path(folder_);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

std::string DiskCache::serialize(llvm::StringRef key,
                                 const CompiledArtifact &artifact) {
  std::string full = (key + "|" + environmentKey()).str();
  std::string meta = metadataJSON(full, artifact);
  std::string payload = meta;
  for (const std::string &object : artifact.objects)
    payload += object;
  std::string out;
  out.reserve(kHeaderBytes + payload.size());
  llvm::raw_string_ostream os(out);
  llvm::support::endian::Writer w(os, llvm::endianness::little);
  os << kMagic;
  w.write<uint32_t>(kFormatVersion);
  w.write<uint32_t>(0);
  w.write<uint64_t>(meta.size());
  w.write<uint64_t>(payload.size() - meta.size());
  w.write<uint64_t>(llvm::xxh3_64bits(payload));
  os << payload;
  return out;
}

llvm::Expected<CompiledArtifact> DiskCache::deserialize(llvm::StringRef bytes,
                                                        llvm::StringRef key) {
  using llvm::support::endian::read;
  if (bytes.size() < kHeaderBytes)
    return corrupt("truncated: " + llvm::Twine(bytes.size()) +
                   " bytes, less than a header");
  if (!bytes.starts_with(kMagic))
    return corrupt("not a kcc cache entry");
  const char *p = bytes.data() + kMagic.size();
  auto u32 = [&p] {
    uint32_t v = read<uint32_t>(p, llvm::endianness::little);
    p += 4;
    return v;
  };
  auto u64 = [&p] {
    uint64_t v = read<uint64_t>(p, llvm::endianness::little);
    p += 8;
    return v;
  };
  uint32_t version = u32();
  (void)u32();
  if (version != kFormatVersion)
    return corrupt("format version " + llvm::Twine(version) + ", expected " +
                   llvm::Twine(kFormatVersion));
  uint64_t metaBytes = u64(), objectBytes = u64(), checksum = u64();
  uint64_t available = bytes.size() - kHeaderBytes;
  if (metaBytes > available || objectBytes > available - metaBytes)
    return corrupt("truncated: " + llvm::Twine(bytes.size()) + " of " +
                   llvm::Twine(kHeaderBytes + metaBytes + objectBytes) +
                   " bytes");
  if (metaBytes + objectBytes != available)
    return corrupt("trailing bytes after the object");
  llvm::StringRef payload = bytes.drop_front(kHeaderBytes);
  if (llvm::xxh3_64bits(payload) != checksum)
    return corrupt("checksum mismatch");
  CompiledArtifact a;
  std::string full = (key + "|" + environmentKey()).str();
  std::vector<uint64_t> sizes;
  if (llvm::Error err =
          readMetadata(payload.take_front(metaBytes), full, a, sizes))
    return err;
  // The objects, back to back, as long as object_bytes says.
  llvm::StringRef objects = payload.drop_front(metaBytes);
  for (uint64_t n : sizes) {
    if (n > objects.size())
      return corrupt("object_bytes do not match the objects");
    a.objects.push_back(objects.take_front(n).str());
    objects = objects.drop_front(n);
  }
  if (!objects.empty())
    return corrupt("object_bytes do not match the objects");
  return a;
}

std::optional<CompiledArtifact> DiskCache::load(llvm::StringRef key,
                                                llvm::raw_ostream *log) const {
  std::string path = pathFor(key);
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    // No entry is the ordinary miss; anything else is worth a line.
    if (buffer.getError() != std::errc::no_such_file_or_directory && log)
      *log << "kcc: note: compile cache: cannot read " << path << ": "
           << buffer.getError().message() << "\n";
    return std::nullopt;
  }
  llvm::Expected<CompiledArtifact> artifact =
      deserialize((*buffer)->getBuffer(), key);
  if (!artifact) {
    std::string why = llvm::toString(artifact.takeError());
    LLVM_DEBUG(llvm::dbgs() << "bad entry " << path << ": " << why << "\n");
    if (log)
      *log << "kcc: note: compile cache: ignoring " << path << " (" << why
           << "); compiling\n";
    return std::nullopt;
  }
  return std::move(*artifact);
}

void DiskCache::store(llvm::StringRef key, const CompiledArtifact &artifact,
                      llvm::raw_ostream *log) const {
  auto note = [&](const llvm::Twine &what, std::error_code ec) {
    if (log)
      *log << "kcc: note: compile cache: " << what << ": " << ec.message()
           << "; not cached\n";
  };
  if (std::error_code ec = llvm::sys::fs::create_directories(folder_))
    return note("cannot create " + folder_, ec);
  std::string path = pathFor(key);
  // The temporary is in the entry's folder, so the rename never crosses a
  // file system and is atomic.
  llvm::SmallString<256> temp;
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + ".%%%%%%%%.tmp", fd, temp))
    return note("cannot create a file in " + folder_, ec);
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << serialize(key, artifact);
    os.close();
    if (os.has_error()) {
      std::error_code ec = os.error();
      os.clear_error();
      llvm::sys::fs::remove(temp);
      return note("cannot write " + temp, ec);
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path)) {
    llvm::sys::fs::remove(temp);
    return note("cannot rename " + temp + " to " + path, ec);
  }
  LLVM_DEBUG(llvm::dbgs() << "stored " << path << "\n");
}
