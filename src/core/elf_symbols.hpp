// The dynamic symbol table of an ELF64 shared object: what it needs from other objects
// (undefined symbols) and what it offers them (exported symbols), plus the libraries it
// names (DT_NEEDED). Read from the file itself, so checking an object never loads it.
#pragma once

#include <string>
#include <vector>

namespace hb {

struct ElfSymbol {
    std::string name;
    bool defined = false;  // false: the object imports it
    bool weak = false;
    bool function = false;
};

struct ElfDynamicInfo {
    std::vector<ElfSymbol> symbols;  // global and weak symbols of .dynsym with default visibility
    std::vector<std::string> needed;  // DT_NEEDED entries, e.g. "libgomp.so.1"
};

// Throws hb::Error naming the file when it is not a well-formed little-endian ELF64 object.
ElfDynamicInfo read_elf_dynamic_info(const std::string& path);

}  // namespace hb
