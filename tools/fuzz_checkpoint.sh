#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of the checkpoint parsers (safetensors header and step
# metadata) with ASan + UBSan, outside Bazel (Debian's clang-14 and libfuzzer-14-dev).
#
#   tools/fuzz_checkpoint.sh [seconds per target, default 180] [jobs, default 1]
#
# Seeds come from tests/checkpoint/testdata and a freshly written metadata example; corpora
# and any crash reproducers stay in /tmp/graft_fuzz/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-180}
out=/tmp/graft_fuzz
mkdir -p "$out"
CXX=${CXX:-clang++-14}
flags=(-std=c++20 -O1 -g -I. -msse4.2 -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -Wno-deprecated-declarations)
srcs=(checkpoint/safetensors.cc checkpoint/metadata.cc checkpoint/shard_grid.cc
      checkpoint/file_util.cc checkpoint/crc32c.cc)
libs=(-labsl_statusor -labsl_status -labsl_cord -labsl_cordz_info -labsl_cord_internal
      -labsl_cordz_functions -labsl_cordz_handle -labsl_exponential_biased -labsl_synchronization
      -labsl_graphcycles_internal -labsl_stacktrace -labsl_symbolize -labsl_debugging_internal
      -labsl_demangle_internal -labsl_malloc_internal -labsl_time -labsl_civil_time
      -labsl_time_zone -labsl_str_format_internal -labsl_strings -labsl_strings_internal
      -labsl_int128 -labsl_throw_delegate -labsl_raw_logging_internal -labsl_log_severity
      -labsl_spinlock_wait -labsl_base -lpthread)

for t in safetensors metadata; do
  mkdir -p "$out/$t/corpus" "$out/$t/crashes"
  echo "== building ${t}_fuzz"
  "$CXX" "${flags[@]}" "checkpoint/fuzz/${t}_fuzz.cc" "${srcs[@]}" "${libs[@]}" -o "$out/${t}_fuzz"
done
cp tests/checkpoint/testdata/*.safetensors "$out/safetensors/corpus/" 2>/dev/null || true
cat > "$out/metadata/corpus/seed.json" <<'JSON'
{"format":"graft-checkpoint-1","graft_version":"0.1.0","step":3,"timestamp_ms":1,
 "metrics":{"loss":1.5},"user_metadata":null,"items":[
 {"name":"p","kind":"tree","file":"p.safetensors",
  "treedef":{"kind":"Mlp","keys":["w","b"],"children":[{"kind":"*"},{"kind":"vector","keys":[],
  "children":[{"kind":"*"}]}]},
  "leaves":[{"path":"w","tensor":"w","dtype":"f32","shape":[2,3],"sharding":"replicated",
             "nbytes":24,"crc32c":7},
            {"path":"b.0","tensor":"b.0","dtype":"bf16","shape":[3],"sharding":"replicated",
             "nbytes":6,"crc32c":8}]},
 {"name":"loader","kind":"json","value":{"offset":5}}]}
JSON
# Format 2: a leaf split in a 2 x 2 grid of blocks over two processes' files.
cat > "$out/metadata/corpus/seed_sharded.json" <<'JSON'
{"format":"graft-checkpoint-2","graft_version":"0.1.0","step":4,"timestamp_ms":1,
 "metrics":null,"user_metadata":null,"items":[
 {"name":"p","kind":"tree","file":"p.safetensors","treedef":{"kind":"*"},
  "leaves":[{"path":"","tensor":"value","dtype":"f32","shape":[4,6],
   "sharding":"NamedSharding(Mesh(data=2, model=2), P('data', 'model'))","nbytes":96,
   "shards":[
    {"file":"p.process-0.safetensors","tensor":"value@0:2,0:3","index":[[0,2],[0,3]],"nbytes":24,"crc32c":1},
    {"file":"p.process-0.safetensors","tensor":"value@0:2,3:6","index":[[0,2],[3,6]],"nbytes":24,"crc32c":2},
    {"file":"p.process-1.safetensors","tensor":"value@2:4,0:3","index":[[2,4],[0,3]],"nbytes":24,"crc32c":3},
    {"file":"p.process-1.safetensors","tensor":"value@2:4,3:6","index":[[2,4],[3,6]],"nbytes":24,"crc32c":4}]}]}]}
JSON

for t in safetensors metadata; do
  echo "== running ${t}_fuzz for ${secs}s"
  (cd "$out/$t/crashes" && "$out/${t}_fuzz" -max_total_time="$secs" -max_len=4096 \
      -print_final_stats=1 "$out/$t/corpus" 2>&1 | tail -n 25) | tee "$out/${t}.log"
done
echo "== crash reproducers found: $(find "$out" -path "*/crashes/*" -type f | wc -l)"
