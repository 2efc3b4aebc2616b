"""graft_repositories(): the external repositories graft's BUILD files name, for graft's own
WORKSPACE and for a user's workspace that takes graft with local_repository:

    local_repository(name = "graft", path = "/path/to/graft")
    load("@graft//third_party:repositories.bzl", "graft_repositories")
    graft_repositories(graft_path = "/path/to/graft")

Nothing is downloaded (Bazel 4.2.3 from Debian, offline):
  - rules_cc, rules_java, remote_coverage_tools: tiny in-tree stand-ins for what Bazel's
    embedded tools would otherwise fetch (third_party/rules_*);
  - eigen, system_libs, llvm: Debian's packages (tools/bootstrap.sh installs them);
  - cuda: /usr/local/cuda, read only by a --config=cuda build.
`graft_path` is graft's folder, absolute or relative to the calling workspace's root (Bazel
resolves a local_repository path against the main workspace, whichever file declares it).
The build files are labels in graft's own repository, whatever that repository is named."""

def graft_repositories(graft_path):
    for name in ["rules_cc", "rules_java", "remote_coverage_tools"]:
        native.local_repository(
            name = name,
            path = graft_path + "/third_party/" + name,
        )
    native.new_local_repository(
        name = "eigen",
        path = "/usr/include/eigen3",
        build_file = str(Label("//third_party:eigen.BUILD")),
    )
    native.new_local_repository(
        name = "system_libs",
        path = "/usr",
        build_file = str(Label("//third_party:system_libs.BUILD")),
    )

    # LLVM 14 (llvm-14-dev): jit compiles fused elementwise groups to native code with its
    # ORC JIT.
    native.new_local_repository(
        name = "llvm",
        path = "/usr/lib/llvm-14",
        build_file = str(Label("//third_party:llvm.BUILD")),
    )

    # Only a --config=cuda build reads it: every CUDA target is incompatible elsewhere
    # (cuda.bzl), so a machine without the toolkit builds and tests the rest.
    native.new_local_repository(
        name = "cuda",
        path = "/usr/local/cuda",
        build_file = str(Label("//third_party:cuda.BUILD")),
    )
