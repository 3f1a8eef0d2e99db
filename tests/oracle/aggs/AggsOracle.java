// The Lucene 8.7 side of the aggregations oracle (tests/oracle/aggs, run by
// scripts/test.d/36-aggs-oracle.sh): indexes docs.tsv with lucene-facet's
// SortedSetDocValuesFacetField for the multi-valued keyword "k" and a NumericDocValuesField +
// LongPoint for "s", then for each filter of queries.tsv ('*' = match_all, else a tag term)
// counts "k" with SortedSetDocValuesFacetCounts (docs per term) and the ranges of ranges.tsv
// over "s" with LongRangeFacetCounts ([from, to): Elasticsearch's range semantics).
// Output per filter: "terms\tk001=5,k002=3,..." (terms ascending) and "ranges\tc1,c2,...".
// Usage: AggsOracle DOCS_TSV QUERIES_TSV RANGES_TSV INDEX_DIR
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

import org.apache.lucene.document.Document;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.Field;
import org.apache.lucene.facet.FacetResult;
import org.apache.lucene.facet.Facets;
import org.apache.lucene.facet.FacetsCollector;
import org.apache.lucene.facet.FacetsConfig;
import org.apache.lucene.facet.LabelAndValue;
import org.apache.lucene.facet.range.LongRange;
import org.apache.lucene.facet.range.LongRangeFacetCounts;
import org.apache.lucene.facet.sortedset.DefaultSortedSetDocValuesReaderState;
import org.apache.lucene.facet.sortedset.SortedSetDocValuesFacetCounts;
import org.apache.lucene.facet.sortedset.SortedSetDocValuesFacetField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.store.FSDirectory;

public class AggsOracle {
    public static void main(String[] args) throws Exception {
        FacetsConfig config = new FacetsConfig();
        config.setMultiValued("k", true);
        try (FSDirectory dir = FSDirectory.open(Paths.get(args[3]));
             IndexWriter w = new IndexWriter(dir, new IndexWriterConfig())) {
            for (String line : Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8)) {
                String[] f = line.split("\t", -1);
                Document d = new Document();
                d.add(new StringField("tag", f[1], Field.Store.NO));
                if (!f[2].isEmpty())
                    for (String k : f[2].split("\\|"))
                        d.add(new SortedSetDocValuesFacetField("k", k));
                if (!f[3].equals("-")) {
                    long s = Long.parseLong(f[3]);
                    d.add(new LongPoint("s", s));
                    d.add(new NumericDocValuesField("s", s));
                }
                w.addDocument(config.build(d));
            }
        }
        List<LongRange> ranges = new ArrayList<>();
        int ri = 0;
        for (String line : Files.readAllLines(Paths.get(args[2]), StandardCharsets.UTF_8)) {
            String[] f = line.split("\t");
            boolean open_lo = f[0].equals("-"), open_hi = f[1].equals("-");
            long lo = open_lo ? Long.MIN_VALUE : Long.parseLong(f[0]);
            long hi = open_hi ? Long.MAX_VALUE : Long.parseLong(f[1]);
            /* [from, to): to exclusive unless open */
            ranges.add(new LongRange("r" + ri++, lo, true, hi, open_hi));
        }
        try (FSDirectory dir = FSDirectory.open(Paths.get(args[3]));
             DirectoryReader r = DirectoryReader.open(dir)) {
            IndexSearcher s = new IndexSearcher(r);
            DefaultSortedSetDocValuesReaderState state = new DefaultSortedSetDocValuesReaderState(r);
            StringBuilder out = new StringBuilder();
            for (String q : Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8)) {
                Query query = q.equals("*") ? new MatchAllDocsQuery() : new TermQuery(new Term("tag", q));
                FacetsCollector fc = new FacetsCollector();
                FacetsCollector.search(s, query, 1, fc);
                Facets terms = new SortedSetDocValuesFacetCounts(state, fc);
                FacetResult fr = terms.getTopChildren(1000000, "k");
                TreeMap<String, Number> counts = new TreeMap<>();
                if (fr != null)
                    for (LabelAndValue lv : fr.labelValues)
                        counts.put(lv.label, lv.value);
                StringBuilder t = new StringBuilder();
                for (var e : counts.entrySet())
                    t.append(t.length() > 0 ? "," : "").append(e.getKey()).append('=').append(e.getValue());
                out.append("terms\t").append(t).append('\n');
                Facets rf = new LongRangeFacetCounts("s", fc, ranges.toArray(new LongRange[0]));
                FacetResult rr = rf.getTopChildren(ranges.size(), "s");
                StringBuilder c = new StringBuilder();
                for (LabelAndValue lv : rr.labelValues)
                    c.append(c.length() > 0 ? "," : "").append(lv.value);
                out.append("ranges\t").append(c).append('\n');
            }
            System.out.print(out);
        }
    }
}
