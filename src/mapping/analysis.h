/* Binds the mapping layer's analysis hook (sc_mapping_analysis) to an index's analyzer
 * registry from src/text, and checks that a mapping names only analyzers and normalizers that
 * exist. */
#ifndef SC_MAPPING_ANALYSIS_H
#define SC_MAPPING_ANALYSIS_H

#include "mapping/mapping.h"
#include "text/analyzer.h"

/* Fills *a so that text fields are analyzed with the analyzers of `reg` (borrowed; must
 * outlive every use of *a). Unknown analyzer names fail the document with SC_EINVAL.
 * Normalizers come from the registry (the built-in "lowercase" lowercases per code point as
 * Java's Character.toLowerCase does); a missing normalizer is the identity. */
void sc_mapping_analysis_init(sc_mapping_analysis *a, const sc_analyzer_registry *reg);

/* Normalizes a keyword value with the named normalizer of `reg` into `arena` (*out is `text`
 * itself when normalizer is NULL). SC_EINVAL for an unknown normalizer, SC_ELIMIT when the arena
 * is exhausted. Thread-safe. */
sc_status sc_mapping_normalize_with(const sc_analyzer_registry *reg, const char *normalizer,
                                    sc_slice text, sc_arena *arena, sc_slice *out) SC_MUST_USE;

/* Checks every analyzer / search_analyzer / search_quote_analyzer / normalizer named in m
 * against reg. SC_EINVAL with err (mapper_parsing_exception "analyzer [x] has not been
 * configured in mappings" / "normalizer [x] not found for field [f]") otherwise. */
sc_status sc_mapping_check_analysis(const sc_mapping *m, const sc_analyzer_registry *reg,
                                    sc_mapping_error *err) SC_MUST_USE;

#endif
