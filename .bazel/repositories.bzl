"""Repository rules that let Debian's Bazel 4.2.3 build with no downloads.

@bazel_tools refers to @rules_cc, @rules_java and @remote_coverage_tools,
which Bazel would normally fetch. We answer each from the local machine, and
we wrap Debian's system libraries in cc_library targets whose link flags come
from pkg-config (see docs/dependencies.md).
"""

def _rules_cc_impl(ctx):
    # Debian's bazel-rules-cc 0.0.4 loads `use_cpp_toolchain`, which Bazel
    # 4.2.3 lacks, so we re-export the native rules instead.
    ctx.file("WORKSPACE", "workspace(name = \"rules_cc\")\n")
    ctx.file("BUILD.bazel", "")
    ctx.file("cc/BUILD.bazel", "")
    ctx.file("cc/defs.bzl", "\n".join([
        "cc_binary = native.cc_binary",
        "cc_import = native.cc_import",
        "cc_library = native.cc_library",
        "cc_proto_library = native.cc_proto_library",
        "cc_test = native.cc_test",
        "cc_toolchain = native.cc_toolchain",
        "cc_toolchain_suite = native.cc_toolchain_suite",
        "fdo_prefetch_hints = native.fdo_prefetch_hints",
        "fdo_profile = native.fdo_profile",
        "objc_library = native.objc_library",
        "",
    ]))

rules_cc_shim = repository_rule(implementation = _rules_cc_impl, local = True)

def _coverage_tools_impl(ctx):
    # Every cc_test depends on these two targets even when coverage is off.
    ctx.file("WORKSPACE", "workspace(name = \"remote_coverage_tools\")\n")
    ctx.file("BUILD.bazel", "\n".join([
        "package(default_visibility = [\"//visibility:public\"])",
        "filegroup(name = \"coverage_report_generator\")",
        "filegroup(name = \"lcov_merger\")",
        "",
    ]))

coverage_tools_shim = repository_rule(implementation = _coverage_tools_impl, local = True)

def _pkg_config(ctx, args):
    result = ctx.execute(["pkg-config"] + args)
    if result.return_code != 0:
        fail("pkg-config %s failed: %s (run ./charybdis to install the Debian packages)" %
             (" ".join(args), result.stderr))
    return result.stdout.strip().split(" ") if result.stdout.strip() else []

def _system_libraries_impl(ctx):
    lines = ["package(default_visibility = [\"//visibility:public\"])", ""]
    for name, modules in ctx.attr.pkg_config.items():
        flags = _pkg_config(ctx, ["--libs"] + modules.split(" "))
        cflags = [f for f in _pkg_config(ctx, ["--cflags"] + modules.split(" ")) if f.startswith("-D")]
        lines.append("cc_library(name = %r, linkopts = %r, defines = %r)" %
                     (name, flags, [f[2:] for f in cflags]))
    for name, flags in ctx.attr.plain.items():
        lines.append("cc_library(name = %r, linkopts = %r)" % (name, flags.split(" ")))
    ctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % ctx.name)
    ctx.file("BUILD.bazel", "\n".join(lines) + "\n")

system_libraries = repository_rule(
    implementation = _system_libraries_impl,
    local = True,
    attrs = {
        # target name -> space-separated pkg-config modules
        "pkg_config": attr.string_dict(),
        # target name -> link flags, for libraries that ship no .pc file
        "plain": attr.string_dict(),
    },
)
