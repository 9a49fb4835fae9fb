#include "core/elf_symbols.hpp"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "core/error.hpp"

namespace hb {

namespace {

class ElfFile {
  public:
    explicit ElfFile(const std::string& path) : path_(path) {
        std::ifstream in(path, std::ios::binary);
        if (!in) throw Error("cannot read " + path);
        bytes_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }

    // A copy of the struct at `offset`, bounds-checked.
    template <typename T>
    T at(std::uint64_t offset, const char* what) const {
        if (offset > bytes_.size() || bytes_.size() - offset < sizeof(T)) fail(std::string(what) + " lies outside the file");
        T value;
        std::memcpy(&value, bytes_.data() + offset, sizeof(T));
        return value;
    }

    // A NUL-terminated string inside [table, table + table_size).
    std::string string_at(std::uint64_t table, std::uint64_t table_size, std::uint64_t index) const {
        if (table > bytes_.size() || table_size > bytes_.size() - table || index >= table_size)
            fail("a symbol name lies outside its string table");
        const char* begin = bytes_.data() + table + index;
        const void* nul = std::memchr(begin, '\0', table_size - index);
        if (!nul) fail("a symbol name is not terminated");
        return std::string(begin, static_cast<const char*>(nul));
    }

    [[noreturn]] void fail(const std::string& why) const { throw Error(path_ + " is not a valid ELF64 shared object: " + why); }
    std::size_t size() const { return bytes_.size(); }

  private:
    std::string path_;
    std::string bytes_;
};

}  // namespace

ElfDynamicInfo read_elf_dynamic_info(const std::string& path) {
    ElfFile file(path);
    const auto header = file.at<Elf64_Ehdr>(0, "the ELF header");
    if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) file.fail("no ELF magic");
    if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)
        file.fail("not a little-endian 64-bit object");
    if (header.e_shentsize != sizeof(Elf64_Shdr)) file.fail("unexpected section header size");

    std::vector<Elf64_Shdr> sections;
    for (std::uint64_t i = 0; i < header.e_shnum; ++i)
        sections.push_back(file.at<Elf64_Shdr>(header.e_shoff + i * sizeof(Elf64_Shdr), "a section header"));

    ElfDynamicInfo info;
    bool found_dynsym = false;
    for (const auto& s : sections) {
        if (s.sh_type == SHT_DYNSYM) {
            if (s.sh_link >= sections.size()) file.fail(".dynsym links to a missing string table");
            const auto& strings = sections[s.sh_link];
            if (s.sh_entsize != sizeof(Elf64_Sym)) file.fail(".dynsym has an unexpected entry size");
            found_dynsym = true;
            for (std::uint64_t off = sizeof(Elf64_Sym); off + sizeof(Elf64_Sym) <= s.sh_size; off += sizeof(Elf64_Sym)) {
                const auto sym = file.at<Elf64_Sym>(s.sh_offset + off, "a dynamic symbol");
                const unsigned bind = ELF64_ST_BIND(sym.st_info);
                if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE) continue;
                if (ELF64_ST_VISIBILITY(sym.st_other) != STV_DEFAULT && ELF64_ST_VISIBILITY(sym.st_other) != STV_PROTECTED)
                    continue;
                ElfSymbol e;
                e.name = file.string_at(strings.sh_offset, strings.sh_size, sym.st_name);
                if (e.name.empty()) continue;
                e.defined = sym.st_shndx != SHN_UNDEF;
                e.weak = bind == STB_WEAK;
                e.function = ELF64_ST_TYPE(sym.st_info) == STT_FUNC || ELF64_ST_TYPE(sym.st_info) == STT_GNU_IFUNC;
                info.symbols.push_back(std::move(e));
            }
        } else if (s.sh_type == SHT_DYNAMIC) {
            if (s.sh_link >= sections.size()) file.fail(".dynamic links to a missing string table");
            const auto& strings = sections[s.sh_link];
            for (std::uint64_t off = 0; off + sizeof(Elf64_Dyn) <= s.sh_size; off += sizeof(Elf64_Dyn)) {
                const auto dyn = file.at<Elf64_Dyn>(s.sh_offset + off, "a dynamic entry");
                if (dyn.d_tag == DT_NULL) break;
                if (dyn.d_tag == DT_NEEDED) info.needed.push_back(file.string_at(strings.sh_offset, strings.sh_size, dyn.d_un.d_val));
            }
        }
    }
    if (!found_dynsym) file.fail("no dynamic symbol table");
    return info;
}

}  // namespace hb
