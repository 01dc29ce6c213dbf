// Script runner of the CMake build test's host port:
//   [MICROPYPATH=dir:dir] bentoclaw_host SCRIPT.py
// Exit status 0, 1 on an uncaught exception, or the code given to sys.exit().
// As on the unix port, the host's files are the VfsPosix mounted at "/" and
// sys.path is the script's folder followed by the MICROPYPATH entries.
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "py/compile.h"
#include "py/gc.h"
#include "py/mperrno.h"
#include "py/runtime.h"
#include "py/stackctrl.h"
#include "extmod/vfs.h"
#include "extmod/vfs_posix.h"
#include "shared/runtime/gchelper.h"

static char heap[MICROPY_HEAP_SIZE];

static int handle_uncaught_exception(mp_obj_base_t *exc) {
    if (mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(exc->type), MP_OBJ_FROM_PTR(&mp_type_SystemExit))) {
        mp_obj_t code = mp_obj_exception_get_value(MP_OBJ_FROM_PTR(exc));
        if (code == mp_const_none) {
            return 0;
        }
        mp_int_t val;
        return mp_obj_get_int_maybe(code, &val) ? (int)val : 1;
    }
    mp_obj_print_exception(&mp_plat_print, MP_OBJ_FROM_PTR(exc));
    return 1;
}

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return 2;
    }
    static char src[256 * 1024];
    size_t len = fread(src, 1, sizeof(src), f);
    int too_long = !feof(f);
    fclose(f);
    if (too_long) {
        fprintf(stderr, "%s: larger than %zu bytes\n", path, sizeof(src));
        return 2;
    }
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_lexer_t *lex = mp_lexer_new_from_str_len(qstr_from_str(path), src, len, 0);
        qstr source_name = lex->source_name;
        mp_store_global(MP_QSTR___file__, MP_OBJ_NEW_QSTR(source_name));
        mp_parse_tree_t parse_tree = mp_parse(lex, MP_PARSE_FILE_INPUT);
        mp_obj_t module_fun = mp_compile(&parse_tree, source_name, false);
        mp_call_function_0(module_fun);
        nlr_pop();
        return 0;
    }
    return handle_uncaught_exception(nlr.ret_val);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s SCRIPT.py\n", argv[0]);
        return 2;
    }
    mp_stack_ctrl_init();
    mp_stack_set_limit(64 * 1024);
    gc_init(heap, heap + sizeof(heap));
    mp_init();

    // The host's files at "/", current directory unchanged (ports/unix/main.c).
    mp_obj_t args[2] = {
        MP_OBJ_TYPE_GET_SLOT(&mp_type_vfs_posix, make_new)(&mp_type_vfs_posix, 0, 0, NULL),
        MP_OBJ_NEW_QSTR(MP_QSTR__slash_),
    };
    mp_vfs_mount(2, args, (mp_map_t *)&mp_const_empty_map);
    MP_STATE_VM(vfs_cur) = MP_STATE_VM(vfs_mount_table);

    mp_sys_path = mp_obj_new_list(0, NULL);
    char dir[PATH_MAX];
    if (realpath(argv[1], dir) != NULL) {
        char *slash = strrchr(dir, '/');
        mp_obj_list_append(mp_sys_path, mp_obj_new_str(dir, slash - dir));
    }
    const char *extra = getenv("MICROPYPATH");
    while (extra != NULL && *extra != '\0') {
        const char *end = strchr(extra, ':');
        size_t n = end != NULL ? (size_t)(end - extra) : strlen(extra);
        mp_obj_list_append(mp_sys_path, mp_obj_new_str(extra, n));
        extra = end != NULL ? end + 1 : NULL;
    }

    int rc = run_file(argv[1]);
    gc_sweep_all();
    mp_deinit();
    return rc;
}

void gc_collect(void) {
    gc_collect_start();
    gc_helper_collect_regs_and_stack();
    gc_collect_end();
}

void nlr_jump_fail(void *val) {
    fprintf(stderr, "FATAL: uncaught NLR %p\n", val);
    exit(1);
}
