// The ELF dynamic-symbol reader behind the DELEGATION check: a real shared object's
// imports and exports, and clear errors for files that are not one.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/elf_symbols.hpp"
#include "core/error.hpp"
#include "targets/cpu/object_check.hpp"

namespace hb {
namespace {

const std::string baseline = std::string(HB_BASELINE_DIR) + "/sigmoid.so";

TEST(ElfSymbols, ReadsImportsExportsAndNeededLibraries) {
    const auto info = read_elf_dynamic_info(baseline);
    bool exports_kernel = false, imports_dnnl = false;
    for (const auto& s : info.symbols) {
        exports_kernel = exports_kernel || (s.defined && s.name == "hapbench_kernel");
        imports_dnnl = imports_dnnl || (!s.defined && s.name.rfind("dnnl_", 0) == 0);
    }
    EXPECT_TRUE(exports_kernel);
    EXPECT_TRUE(imports_dnnl);
    bool needs_dnnl = false;
    for (const auto& lib : info.needed) needs_dnnl = needs_dnnl || lib.find("dnnl") != std::string::npos;
    EXPECT_TRUE(needs_dnnl);
}

TEST(ElfSymbols, ATextFileIsRejectedByName) {
    const auto path = std::filesystem::temp_directory_path() / "hapbench-not-elf.so";
    std::ofstream(path) << std::string(100, 'x') << "\n";  // longer than an ELF header
    try {
        read_elf_dynamic_info(path.string());
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("no ELF magic"), std::string::npos) << e.what();
    }
}

TEST(ElfSymbols, TruncatedObjectIsAnErrorNotACrash) {
    std::ifstream in(baseline, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto path = std::filesystem::temp_directory_path() / "hapbench-truncated.so";
    std::ofstream(path, std::ios::binary) << bytes.substr(0, 200);
    EXPECT_THROW(read_elf_dynamic_info(path.string()), Error);
}

TEST(ObjectCheck, TheBaselineWouldBeDelegation) {
    // The baseline is hapbench's own oneDNN code; as a submission it would be refused.
    const ObjectCheck c = check_kernel_object(baseline);
    EXPECT_FALSE(c.ok);
    EXPECT_NE(c.reason.find("dnnl"), std::string::npos) << c.reason;
}

}  // namespace
}  // namespace hb
