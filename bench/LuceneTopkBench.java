// Lucene 8.7 side of bench/topk_bench.c (run by bench/topk_bench.sh): the same N documents from
// the same xorshift generator (date: LongPoint + NumericDocValuesField epoch millis; views:
// LongPoint + NumericDocValuesField, missing on 1 doc in 20; tag: StringField), force-merged
// to one segment, then the same cases single-threaded as Elasticsearch runs them: the date
// range as IndexOrDocValuesQuery(LongPoint range, SortedNumericDocValuesField slow range)
// under ConstantScoreQuery, top 10 with TopScoreDocCollector.create(10, 1) (totals not
// tracked: once 10 are collected the constant scorer is told nothing more competes); the term
// sorts with TopFieldCollector.create(sort, 10, 1) and setCanUsePoints (Lucene 8.7's numeric
// sort optimization skips by the points), missing values last. Timed by thread CPU time,
// median of RUNS after a JIT warm-up. Prints TSV: case, hits, median_us, top (doc ids).
// Usage: java -cp lucene-core-8.7.0.jar:CLASSES LuceneTopkBench N RUNS INDEX_DIR
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.SortedNumericDocValuesField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.ConstantScoreQuery;
import org.apache.lucene.search.IndexOrDocValuesQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TopFieldCollector;
import org.apache.lucene.search.TopScoreDocCollector;
import org.apache.lucene.store.FSDirectory;

public class LuceneTopkBench {
    static final long DATE_BASE = 1577836800000L, DATE_SPAN = 5L * 365 * 86400 * 1000,
                      DAY_MS = 86400L * 1000;
    static long xs = 88172645463325252L;

    static long next() {
        xs ^= xs << 13;
        xs ^= xs >>> 7;
        xs ^= xs << 17;
        return xs;
    }

    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    interface Op {
        TopDocs run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        int runs = Integer.parseInt(args[1]);
        Path dir = Path.of(args[2]);
        try (FSDirectory d = FSDirectory.open(dir)) {
            if (!DirectoryReader.indexExists(d)) {
                IndexWriterConfig cfg = new IndexWriterConfig();
                cfg.setRAMBufferSizeMB(256);
                String[] tags = {"a", "b", "c", "z"};
                try (IndexWriter w = new IndexWriter(d, cfg)) {
                    for (int i = 0; i < n; i++) {
                        long date = DATE_BASE + Long.remainderUnsigned(next(), DATE_SPAN);
                        long v = next();
                        long views = Long.remainderUnsigned(v >>> 8, 100000);
                        long r = Long.remainderUnsigned(next(), 1000);
                        String tag = tags[r < 500 ? 0 : r < 600 ? 1 : r < 610 ? 2 : 3];
                        Document doc = new Document();
                        doc.add(new LongPoint("date", date));
                        doc.add(new SortedNumericDocValuesField("date", date));
                        if (Long.remainderUnsigned(v, 20) != 0) {
                            doc.add(new LongPoint("views", views));
                            doc.add(new NumericDocValuesField("views", views));
                        }
                        doc.add(new StringField("tag", tag, Field.Store.NO));
                        w.addDocument(doc);
                    }
                    w.forceMerge(1);
                }
            }
            try (DirectoryReader r = DirectoryReader.open(d)) {
                IndexSearcher s = new IndexSearcher(r);
                s.setQueryCache(null);
                long lo = DATE_BASE + 1000 * DAY_MS;
                String[] names = {"date_range_1h", "date_range_1d", "date_range_30d",
                                  "date_range_1y", "sort_views_desc_tag_a",
                                  "sort_views_desc_tag_b", "sort_views_desc_tag_c",
                                  "sort_views_asc_tag_b"};
                long[] widths = {DAY_MS / 24, DAY_MS, 30 * DAY_MS, 365 * DAY_MS};
                Op[] ops = new Op[names.length];
                for (int i = 0; i < 4; i++) {
                    long hi = lo + widths[i] - 1;
                    Query q = new ConstantScoreQuery(new IndexOrDocValuesQuery(
                        LongPoint.newRangeQuery("date", lo, hi),
                        SortedNumericDocValuesField.newSlowRangeQuery("date", lo, hi)));
                    ops[i] = () -> {
                        TopScoreDocCollector c = TopScoreDocCollector.create(10, 1);
                        s.search(q, c);
                        return c.topDocs();
                    };
                }
                String[] sortTags = {"a", "b", "c", "b"};
                boolean[] desc = {true, true, true, false};
                for (int i = 0; i < 4; i++) {
                    SortField sf = new SortField("views", SortField.Type.LONG, desc[i]);
                    sf.setMissingValue(desc[i] ? Long.MIN_VALUE : Long.MAX_VALUE);
                    sf.setCanUsePoints();
                    Sort sort = new Sort(sf);
                    Query q = new TermQuery(new Term("tag", sortTags[i]));
                    ops[4 + i] = () -> {
                        TopFieldCollector c = TopFieldCollector.create(sort, 10, 1);
                        s.search(q, c);
                        return c.topDocs();
                    };
                }
                for (int w = 0; w < 2000; w++) // JIT warm-up
                    for (Op op : ops)
                        op.run();
                System.out.println("case\thits\tmedian_us\ttop");
                for (int i = 0; i < ops.length; i++) {
                    double[] t = new double[runs];
                    TopDocs td = null;
                    for (int k = 0; k < runs; k++) {
                        long t0 = MX.getCurrentThreadCpuTime();
                        td = ops[i].run();
                        t[k] = (MX.getCurrentThreadCpuTime() - t0) / 1e3;
                    }
                    Arrays.sort(t);
                    StringBuilder top = new StringBuilder();
                    for (ScoreDoc sd : td.scoreDocs)
                        top.append(top.length() > 0 ? "," : "").append(sd.doc);
                    System.out.printf("%s\t%d\t%.1f\t%s%n", names[i], td.scoreDocs.length,
                                      t[runs / 2], top);
                }
            }
        }
    }
}
