// Indexing benchmark of Lucene 8.7 on the NDJSON wiki corpus of `scry gen wiki`, the baseline
// for bench/index_compare.sh. Each line becomes a document shaped as Elasticsearch would index
// it with bench/workloads/wiki.index.json: title/body text (StandardAnalyzer, no stop words,
// positions + norms), keywords (id and *_s: indexed DOCS without norms + SortedSetDocValues),
// numerics (price_i IntPoint, sort_i LongPoint, date_dt LongPoint of epoch millis, each with
// SortedNumericDocValues), _id (indexed + stored) and _source (the raw JSON line as a
// StoredField). The file is read into memory first; the timed part is parsing + analysis +
// indexing + the final commit, with T threads on one IndexWriter, no merges while indexing
// (NoMergePolicy, as scry's shard without background merges), then a timed forceMerge(1).
// Compile with bench/LuceneNdjson.java (the corpus parsing and field building).
// Usage: java -cp lucene-core:lucene-analyzers-common:. LuceneIndexBench FILE.ndjson DIR
//            THREADS [RAM_MB (64)]
// Prints one line of key=value pairs (docs, bytes, index_s, cpu_s = process CPU time of the
// indexing part with JIT and GC threads, docs_per_s, mb_per_s, segments, size_bytes, merge_s,
// merge_cpu_s = process CPU time of the force merge and its commit,
// merged_bytes) for index_compare.sh; the bytes per file extension go to stderr.
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.TieredMergePolicy;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.BytesRef;

public class LuceneIndexBench {
    static byte[] data;
    static int[] lineStart, lineEnd;

    /** title and body are text, date_dt a date, price_i an integer; the other strings are
     * keywords and the other numbers longs (bench/workloads/wiki.index.json). */
    static String typeOf(String name) {
        if (name.equals("title") || name.equals("body")) return "text";
        if (name.equals("date_dt")) return "date";
        if (name.equals("price_i")) return "integer";
        return "keyword";
    }

    static Document toDocument(int line) {
        int s = lineStart[line], e = lineEnd[line];
        Document doc = new Document();
        LuceneNdjson.addFields(doc, data, s, LuceneIndexBench::typeOf);
        doc.add(new StringField("_id", Integer.toString(line), Field.Store.YES));
        doc.add(new StoredField("_source", new BytesRef(data, s, e - s)));
        return doc;
    }

    static long dirBytes(Path dir) throws IOException {
        long n = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) if (Files.isRegularFile(p)) n += Files.size(p);
        }
        return n;
    }

    public static void main(String[] args) throws Exception {
        Path file = Paths.get(args[0]);
        Path dir = Paths.get(args[1]);
        int threads = Integer.parseInt(args[2]);
        double ramMb = args.length > 3 ? Double.parseDouble(args[3]) : 64;
        data = Files.readAllBytes(file);
        int[][] lines = LuceneNdjson.lines(data);
        lineStart = lines[0];
        lineEnd = lines[1];
        final int nDocs = lineStart.length;
        LuceneNdjson.deleteTree(dir);
        StandardAnalyzer analyzer = new StandardAnalyzer(CharArraySet.EMPTY_SET);
        IndexWriterConfig cfg = new IndexWriterConfig(analyzer);
        cfg.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
        cfg.setRAMBufferSizeMB(ramMb);
        cfg.setMergePolicy(NoMergePolicy.INSTANCE);
        cfg.setUseCompoundFile(false);
        FSDirectory fsd = FSDirectory.open(dir);
        IndexWriter w = new IndexWriter(fsd, cfg);
        AtomicInteger next = new AtomicInteger();
        com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
                java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        long c0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();
        List<Thread> ts = new ArrayList<>();
        final Throwable[] failed = new Throwable[1];
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                try {
                    for (;;) {
                        int start = next.getAndAdd(256);
                        if (start >= nDocs) break;
                        int end = Math.min(nDocs, start + 256);
                        for (int i = start; i < end; i++) w.addDocument(toDocument(i));
                    }
                } catch (Throwable ex) {
                    failed[0] = ex;
                }
            });
            th.start();
            ts.add(th);
        }
        for (Thread th : ts) th.join();
        if (failed[0] != null) throw new RuntimeException(failed[0]);
        w.commit();
        double indexS = (System.nanoTime() - t0) / 1e9;
        double cpuS = (os.getProcessCpuTime() - c0) / 1e9;
        int segments;
        try (DirectoryReader r = DirectoryReader.open(fsd)) {
            segments = r.leaves().size();
        }
        long size = dirBytes(dir);
        w.getConfig().setMergePolicy(new TieredMergePolicy());
        long t1 = System.nanoTime(), cm0 = os.getProcessCpuTime();
        w.forceMerge(1);
        w.commit();
        double mergeS = (System.nanoTime() - t1) / 1e9;
        double mergeCpuS = (os.getProcessCpuTime() - cm0) / 1e9;
        w.close();
        long merged = dirBytes(dir);
        long bytes = 0;
        for (int i = 0; i < nDocs; i++) bytes += lineEnd[i] - lineStart[i];
        System.out.printf("docs=%d bytes=%d threads=%d index_s=%.2f cpu_s=%.2f docs_per_s=%.0f"
                + " mb_per_s=%.2f segments=%d size_bytes=%d merge_s=%.2f merge_cpu_s=%.2f"
                + " merged_bytes=%d%n",
                nDocs, bytes, threads, indexS, cpuS, nDocs / indexS, bytes / 1e6 / indexS,
                segments, size, mergeS, mergeCpuS, merged);
        StringBuilder ext = new StringBuilder("lucene files:");
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            java.util.TreeMap<String, Long> byExt = new java.util.TreeMap<>();
            for (Path p : ds) {
                String f = p.getFileName().toString();
                int dot = f.lastIndexOf('.');
                String k = dot >= 0 ? f.substring(dot + 1) : f;
                byExt.merge(k, Files.size(p), Long::sum);
            }
            byExt.forEach((k, v) -> ext.append(String.format(" %s=%.1fMB", k, v / 1e6)));
        }
        System.err.println(ext);
    }
}
