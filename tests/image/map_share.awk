# Sums, from a GNU ld map file, the bytes that input sections from one archive
# contribute to the image.  Usage:
#   awk -v lib=libfoo.a -f map_share.awk image.map
# Prints: code=<.text+.rodata> ram=<.data+.bss> code_nobuiltins=<code without
# compiler_builtins members> (all decimal bytes); with -v only=data just the
# .data bytes. A map without its memory map part, or without any input section
# from lib, prints nothing on stdout, says why on stderr and exits 1: an empty
# parse must never read as 0 bytes.
function hex(s,    i, c, v) {
    v = 0
    s = tolower(s)
    sub(/^0x/, "", s)
    for (i = 1; i <= length(s); i++) {
        c = index("0123456789abcdef", substr(s, i, 1)) - 1
        v = v * 16 + c
    }
    return v
}
function account(size, file,    n) {
    if (index(file, lib "(") == 0) return
    matched++
    n = hex(size)
    if (osec ~ /^\.(text|rodata)/ || osec ~ /^\.ARM\.(exidx|extab)/) {
        code += n
        if (file !~ /compiler_builtins/) code_nb += n
    } else if (osec ~ /^\.(data|bss|tdata|tbss|noinit)/) {
        ram += n
        if (osec ~ /^\.(data|tdata)/) data += n
    }
}
BEGIN { inmap = 0; code = 0; ram = 0; code_nb = 0; matched = 0 }
/^Linker script and memory map/ { inmap = 1; next }
!inmap { next }
/^\.[^ ]/ { osec = $1; pending = 0; next }
# Input section with address, size and file on one line.
/^ [^ ]/ && NF >= 4 && $2 ~ /^0x/ && $3 ~ /^0x/ { account($3, $4); pending = 0; next }
/^ (COMMON|\*\(COMMON\))/ && NF >= 4 { account($3, $4); next }
# Long input-section name alone on its line; numbers follow on the next.
/^ [^ *]/ && NF == 1 { pending = 1; next }
pending && /^ +0x/ && NF >= 3 && $2 ~ /^0x/ { account($2, $3); pending = 0; next }
{ pending = 0 }
END {
    if (!inmap) {
        print "map_share.awk: " FILENAME ": no \"Linker script and memory map\" part" > "/dev/stderr"
        exit 1
    }
    if (matched == 0) {
        print "map_share.awk: " FILENAME ": no input section from " lib > "/dev/stderr"
        exit 1
    }
    if (only == "data") { print data + 0; exit }
    printf "code=%d ram=%d code_nobuiltins=%d\n", code, ram, code_nb }
