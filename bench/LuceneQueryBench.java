// The Lucene side of bench/query_bench.sh: indexes the same DOCS (id <TAB> text) with
// StandardAnalyzer (no stop words) into WORK_DIR/lucene (MMapDirectory, force-merged to one
// segment), then runs the same query classes in the same modes as bench/query_bench.c:
// COUNT (IndexSearcher.count), TOP_10 (search(q, 10): totals exact up to 1,000), TOP_10_COUNT
// (TopScoreDocCollector with an exact total). One warm-up pass over everything (the JIT), then
// per query one warm-up run and REPS timed runs. Output: class, mode, queries, median_us,
// p99_us, hits_sum, mean_us (tab-separated). QB_CPUTIME=1 times by the thread's CPU time (as
// query_bench.c does with the same variable), for machines busy with other work. QB_CLASSES=a,b
// runs only those classes (as query_bench.c).
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import java.util.regex.*;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.*;
import org.apache.lucene.index.*;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.*;
import org.apache.lucene.store.*;

public class LuceneQueryBench {
  static final Pattern Q = Pattern.compile("\"query\":\"((?:[^\"\\\\]|\\\\.)*)\",\"class\":\"([^\"]*)\"");

  public static void main(String[] args) throws Exception {
    String docs = args[0], queries = args[1];
    Path dirPath = Paths.get(args[2], "lucene");
    int reps = args.length > 3 ? Integer.parseInt(args[3]) : 5;
    StandardAnalyzer an = new StandardAnalyzer(CharArraySet.EMPTY_SET);
    Directory dir = FSDirectory.open(dirPath);
    if (!DirectoryReader.indexExists(dir)) {
      long t0 = System.nanoTime();
      IndexWriterConfig cfg = new IndexWriterConfig(an);
      cfg.setRAMBufferSizeMB(512);
      IndexWriter w = new IndexWriter(dir, cfg);
      try (BufferedReader r = Files.newBufferedReader(Paths.get(docs), StandardCharsets.UTF_8)) {
        for (String line; (line = r.readLine()) != null; ) {
          int tab = line.indexOf('\t');
          Document d = new Document();
          d.add(new StringField("id", line.substring(0, tab), Field.Store.NO));
          d.add(new TextField("body", line.substring(tab + 1), Field.Store.NO));
          w.addDocument(d);
        }
      }
      w.forceMerge(1);
      w.close();
      System.err.printf("lucene: indexed in %.1f s%n", (System.nanoTime() - t0) / 1e9);
    }
    DirectoryReader reader = DirectoryReader.open(dir);
    IndexSearcher s = new IndexSearcher(reader);
    s.setQueryCache(null);
    List<String[]> qs = new ArrayList<>();
    String only = System.getenv("QB_CLASSES");
    Set<String> keep = only == null || only.isEmpty() ? null : new HashSet<>(Arrays.asList(only.split(",")));
    for (String line : Files.readAllLines(Paths.get(queries), StandardCharsets.UTF_8)) {
      Matcher m = Q.matcher(line);
      if (!m.find()) continue;
      String text = m.group(1).replace("\\\"", "\"").replace("\\\\", "\\");
      String cls = m.group(2);
      if (keep != null && !keep.contains(cls)) continue;
      if (cls.equals("regex")) text = "/" + text + "/";
      qs.add(new String[] {text, cls});
    }
    QueryParser qp = new QueryParser("body", an);
    qp.setAllowLeadingWildcard(true);
    String[] modes = {"COUNT", "TOP_10", "TOP_10_COUNT"};
    // JIT warm-up over everything
    for (int round = 0; round < 2; round++)
      for (String[] q : qs)
        for (int m = 0; m < 3; m++) run(s, qp.parse(q[0]), m);
    System.out.println("class\tmode\tqueries\tmedian_us\tp99_us\thits_sum\tmean_us");
    int i = 0;
    while (i < qs.size()) {
      int j = i;
      while (j < qs.size() && qs.get(j)[1].equals(qs.get(i)[1])) j++;
      for (int m = 0; m < 3; m++) {
        long[] lat = new long[(j - i) * reps];
        int n = 0;
        long hitsSum = 0;
        for (int k = i; k < j; k++) {
          Query q = qp.parse(qs.get(k)[0]);
          hitsSum += run(s, q, m)[1];
          for (int r = 0; r < reps; r++) lat[n++] = run(s, q, m)[0];
        }
        Arrays.sort(lat, 0, n);
        int p99 = (int) ((n - 1) * 0.99);
        double total = 0;
        for (int k = 0; k < n; k++) total += lat[k];
        System.out.printf("%s\t%s\t%d\t%.1f\t%.1f\t%d\t%.1f%n", qs.get(i)[1], modes[m], j - i,
            lat[n / 2] / 1e3, lat[p99] / 1e3, hitsSum, total / n / 1e3);
      }
      i = j;
    }
  }

  static final boolean CPU_TIME = System.getenv("QB_CPUTIME") != null;
  static final java.lang.management.ThreadMXBean MX =
      java.lang.management.ManagementFactory.getThreadMXBean();

  static long now() {
    return CPU_TIME ? MX.getCurrentThreadCpuTime() : System.nanoTime();
  }

  static long[] run(IndexSearcher s, Query q, int mode) throws IOException {
    long t0 = now();
    long hits;
    if (mode == 0) {
      hits = s.count(q);
    } else {
      TopScoreDocCollector c = TopScoreDocCollector.create(10, mode == 1 ? 1000 : Integer.MAX_VALUE);
      s.search(q, c);
      hits = c.topDocs().totalHits.value;
    }
    return new long[] {now() - t0, hits};
  }
}
