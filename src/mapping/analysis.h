/* Binds the mapping layer's analysis hook (sc_mapping_analysis) to an index's analyzer
 * registry from src/text, and checks that a mapping names only analyzers and normalizers that
 * exist. */
#ifndef SC_MAPPING_ANALYSIS_H
#define SC_MAPPING_ANALYSIS_H

#include "mapping/mapping.h"
#include "text/analyzer.h"

/* Fills *a so that text fields are analyzed with the analyzers of `reg` (borrowed; must
 * outlive every use of *a). Unknown analyzer names fail the document with SC_EINVAL.
 * Normalizers: "lowercase" (Unicode lowercasing, root locale) is built in; a missing
 * normalizer is the identity. */
void sc_mapping_analysis_init(sc_mapping_analysis *a, const sc_analyzer_registry *reg);

/* Checks every analyzer / search_analyzer / search_quote_analyzer / normalizer named in m
 * against reg. SC_EINVAL with err (mapper_parsing_exception "analyzer [x] has not been
 * configured in mappings" / "normalizer [x] not found for field [f]") otherwise. */
sc_status sc_mapping_check_analysis(const sc_mapping *m, const sc_analyzer_registry *reg,
                                    sc_mapping_error *err) SC_MUST_USE;

#endif
