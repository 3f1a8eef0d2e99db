// Lucene 8.7 oracle for the highlighter (src/search/highlight*.c): runs the real
// UnifiedHighlighter (analysis offsets, strict phrases, multi-term queries, sentence
// BreakIterator, PassageScorer) over cases.tsv and prints one line per case: the passages that
// hold matches, each formatted as Elasticsearch's CustomPassageFormatter does (<em> tags,
// overlapping matches merged, trimmed), joined with " ## ". Lucene's own DefaultPassageFormatter
// would join the passages into one string; Elasticsearch returns them as separate fragments.
//   cases.tsv: text \t query \t max_passages, query = clause [" | " clause]... (should), clause =
//   term:T | phrase:W W.. | prefix:P | wildcard:P | fuzzy:T (max edits 1)
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.text.BreakIterator;
import java.text.CharacterIterator;
import java.text.StringCharacterIterator;
import java.util.Arrays;
import java.util.List;

import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.FuzzyQuery;
import org.apache.lucene.search.PhraseQuery;
import org.apache.lucene.search.PrefixQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.WildcardQuery;
import org.apache.lucene.search.uhighlight.Passage;
import org.apache.lucene.search.uhighlight.PassageFormatter;
import org.apache.lucene.search.uhighlight.UnifiedHighlighter;

public class HighlightOracle {
    static final String F = "body";

    static Query clause(String s) {
        int c = s.indexOf(':');
        String k = s.substring(0, c), a = s.substring(c + 1);
        switch (k) {
            case "term": return new TermQuery(new Term(F, a));
            case "phrase": return new PhraseQuery(F, a.split(" "));
            case "prefix": return new PrefixQuery(new Term(F, a));
            case "wildcard": return new WildcardQuery(new Term(F, a));
            case "fuzzy": return new FuzzyQuery(new Term(F, a), 1, 0);
            default: throw new IllegalArgumentException(s);
        }
    }

    static Query parse(String spec) {
        String[] parts = spec.split(" \\| ");
        if (parts.length == 1) return clause(spec);
        BooleanQuery.Builder b = new BooleanQuery.Builder();
        for (String p : parts) b.add(clause(p), BooleanClause.Occur.SHOULD);
        return b.build();
    }

    /** Elasticsearch-style snippets: only passages with matches, each trimmed. */
    static class EsFormatter extends PassageFormatter {
        @Override
        public Object format(Passage[] passages, String content) {
            StringBuilder all = new StringBuilder();
            int n = 0;
            for (Passage p : passages) {
                if (p.getNumMatches() == 0) continue;
                StringBuilder sb = new StringBuilder();
                int pos = p.getStartOffset();
                for (int i = 0; i < p.getNumMatches(); i++) {
                    int start = p.getMatchStarts()[i];
                    sb.append(content, pos, start);
                    int end = p.getMatchEnds()[i];
                    while (i + 1 < p.getNumMatches() && p.getMatchStarts()[i + 1] < end) {
                        end = p.getMatchEnds()[++i];
                    }
                    end = Math.min(end, p.getEndOffset());
                    sb.append("<em>").append(content, start, end).append("</em>");
                    pos = end;
                }
                sb.append(content, pos, Math.max(pos, p.getEndOffset()));
                if (n++ > 0) all.append(" ## ");
                all.append(sb.toString().trim());
            }
            return all.toString();
        }
    }

    /** Boundaries given from outside (ICU's, as scry computes them), so that the passages can
     * be compared independently of java.text's sentence rules. */
    static class FixedBreakIterator extends BreakIterator {
        int[] b = {0};
        int cur = 0;
        CharacterIterator text = new StringCharacterIterator("");

        void set(int[] bounds) { b = bounds; cur = 0; }
        @Override public int first() { cur = 0; return b[0]; }
        @Override public int last() { cur = b.length - 1; return b[cur]; }
        @Override public int next(int n) { int i = cur + n; if (i < 0 || i >= b.length) return DONE; cur = i; return b[i]; }
        @Override public int next() { return next(1); }
        @Override public int previous() { return next(-1); }
        @Override public int current() { return b[cur]; }
        @Override public int following(int off) {
            for (int i = 0; i < b.length; i++) if (b[i] > off) { cur = i; return b[i]; }
            cur = b.length - 1; return DONE;
        }
        @Override public int preceding(int off) {
            for (int i = b.length - 1; i >= 0; i--) if (b[i] < off) { cur = i; return b[i]; }
            cur = 0; return DONE;
        }
        @Override public CharacterIterator getText() { return text; }
        @Override public void setText(CharacterIterator t) { text = t; cur = 0; }
    }

    /** args: cases.tsv [breaks.txt] -- with breaks.txt (one line of UTF-16 boundary offsets per
     * case) the passages use those boundaries instead of java.text's sentence instance. */
    public static void main(String[] args) throws Exception {
        StandardAnalyzer an = new StandardAnalyzer(CharArraySet.EMPTY_SET);
        final FixedBreakIterator fixed = new FixedBreakIterator();
        final boolean useFixed = args.length > 1;
        UnifiedHighlighter uh = new UnifiedHighlighter(null, an) {
            @Override
            protected PassageFormatter getFormatter(String field) {
                return new EsFormatter();
            }
            @Override
            protected BreakIterator getBreakIterator(String field) {
                return useFixed ? fixed : super.getBreakIterator(field);
            }
        };
        List<String> breaks = useFixed ? Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8) : null;
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        int n = 0;
        for (String line : Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8)) {
            String[] c = line.split("\t");
            if (useFixed) {
                fixed.set(Arrays.stream(breaks.get(n).trim().split(" ")).mapToInt(Integer::parseInt).toArray());
            }
            n++;
            Object r = uh.highlightWithoutSearcher(F, parse(c[1]), c[0], Integer.parseInt(c[2]));
            out.println(r == null ? "" : r.toString());
        }
        out.flush();
    }
}
