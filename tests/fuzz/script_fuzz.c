/* libFuzzer target for the script compiler and evaluator (search/script.h): arbitrary bytes
 * compiled against the builtin environment; an accepted script is evaluated with its variables
 * bound to values of every type in turn. Compile and run-time errors are fine; any crash,
 * sanitizer report or abort (a non-OK status without a reason, an EPARSE without a position
 * inside the source) is a bug in search/script. A script sc_script_doubles_ok accepts is also
 * run by sc_script_eval_doubles, which must agree with the evaluator bit for bit. */
#include <stddef.h>
#include <stdint.h>
#include <math.h>
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
    if (sc_script_doubles_ok(s, NULL)) {
        static const double rows[4] = {0.0, -1.5, 3.0, 1e308};
        double *cols = calloc((n ? n : 1) * 4, sizeof *cols), out[4];
        const double **vp = calloc(n ? n : 1, sizeof *vp);
        double *scratch = calloc(sc_script_doubles_scratch(s) * 4, sizeof *scratch);
        if (!cols || !vp || !scratch)
            abort();
        for (size_t i = 0; i < n; i++) {
            for (int r = 0; r < 4; r++)
                cols[i * 4 + (size_t)r] = rows[(r + (int)i) % 4];
            vp[i] = cols + i * 4;
        }
        sc_script_eval_doubles(s, vp, 4, out, scratch);
        for (int r = 0; r < 4; r++) {
            for (size_t i = 0; i < n; i++)
                vars[i] = sc_script_double(vp[i][r]);
            sc_script_value v;
            if (sc_script_eval(s, vars, NULL, &v, &err) != SC_OK || v.type != SC_SCRIPT_DOUBLE ||
                (memcmp(&v.d, &out[r], sizeof v.d) && !(isnan(v.d) && isnan(out[r]))))
                abort();
        }
        free(cols);
        free(vp);
        free(scratch);
    }
    free(vars);
    sc_arena_fini(&a);
    return 0;
}
