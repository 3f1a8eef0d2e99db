/* libFuzzer target for the script compiler and evaluator (search/script.h): arbitrary bytes
 * compiled against the builtin environment; an accepted script is evaluated with its variables
 * bound to values of every type in turn. Compile and run-time errors are fine; any crash,
 * sanitizer report or abort (a non-OK status without a reason, an EPARSE without a position
 * inside the source) is a bug in search/script. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "search/script.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_arena a;
    sc_arena_init(&a, 1 << 20);
    sc_script *s;
    sc_script_error err;
    sc_status st =
        sc_script_compile(sc_script_env_builtin(), sc_slice_make(data, size), &a, &s, &err);
    if (st != SC_OK) {
        if (!err.reason[0] || (st == SC_EPARSE && (err.pos < 0 || (size_t)err.pos > size)))
            abort();
        sc_arena_fini(&a);
        return 0;
    }
    size_t n = sc_script_n_vars(s);
    sc_script_value *vars = calloc(n ? n : 1, sizeof *vars);
    if (!vars)
        abort();
    static const double d[] = {0.0, -1.5, 3.0, 1e308};
    for (int round = 0; round < 6; round++) {
        for (size_t i = 0; i < n; i++) {
            switch ((round + (int)i) % 6) {
            case 0: vars[i] = sc_script_long((int64_t)i - 1); break;
            case 1: vars[i] = sc_script_double(d[i % 4]); break;
            case 2: vars[i] = sc_script_bool(i & 1); break;
            case 3: vars[i] = sc_script_null(); break;
            case 4:
                vars[i] = (sc_script_value){.type = SC_SCRIPT_STRING, .s = sc_slice_cstr("x")};
                break;
            default: vars[i] = sc_script_long(INT64_MIN); break;
            }
            if (!sc_script_var_get(s, i) || !sc_script_var_get(s, i)->name)
                abort();
        }
        sc_script_value out;
        st = sc_script_eval(s, vars, NULL, &out, &err);
        if (st != SC_OK && (st != SC_EINVAL || !err.reason[0]))
            abort();
    }
    free(vars);
    sc_arena_fini(&a);
    return 0;
}
