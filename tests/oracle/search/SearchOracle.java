// The Lucene side of the search oracle (tests/oracle/search): indexes docs.tsv with
// StandardAnalyzer (no stop words) and BM25 defaults into one in-memory segment (no merges, so
// Lucene doc ids follow insertion order like scry's shard-global ids), deletes the docs whose id
// is a multiple of DEL_MOD (0 = none), then answers every query of queries.txt with the classic
// QueryParser: "<line>\t<count>\t<id>:<score> ..." (top 10 by score, ties by doc id).
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.*;
import org.apache.lucene.index.*;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.*;
import org.apache.lucene.store.*;

public class SearchOracle {
  public static void main(String[] args) throws Exception {
    String docs = args[0], queries = args[1];
    int delMod = Integer.parseInt(args[2]);
    StandardAnalyzer an = new StandardAnalyzer(CharArraySet.EMPTY_SET);
    Directory dir = new ByteBuffersDirectory();
    IndexWriterConfig cfg = new IndexWriterConfig(an);
    cfg.setMergePolicy(NoMergePolicy.INSTANCE);
    cfg.setRAMBufferSizeMB(1024);
    cfg.setMaxBufferedDocs(IndexWriterConfig.DISABLE_AUTO_FLUSH);
    IndexWriter w = new IndexWriter(dir, cfg);
    int n = 0;
    try (BufferedReader r = Files.newBufferedReader(Paths.get(docs), StandardCharsets.UTF_8)) {
      for (String line; (line = r.readLine()) != null; ) {
        int tab = line.indexOf('\t');
        Document d = new Document();
        d.add(new StringField("id", line.substring(0, tab), Field.Store.YES));
        d.add(new TextField("body", line.substring(tab + 1), Field.Store.NO));
        w.addDocument(d);
        n++;
      }
    }
    if (delMod > 0)
      for (int i = 0; i < n; i += delMod) w.deleteDocuments(new Term("id", Integer.toString(i)));
    w.commit();
    w.close();
    DirectoryReader reader = DirectoryReader.open(dir);
    if (reader.leaves().size() != 1) throw new IllegalStateException("expected one segment");
    IndexSearcher s = new IndexSearcher(reader);
    s.setQueryCache(null);
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
    List<String> qs = Files.readAllLines(Paths.get(queries), StandardCharsets.UTF_8);
    long t0 = System.nanoTime();
    for (String qs1 : qs) {
      QueryParser qp = new QueryParser("body", an);
      qp.setAllowLeadingWildcard(true);
      StringBuilder sb = new StringBuilder(qs1).append('\t');
      try {
        Query q = qp.parse(qs1);
        int count = s.count(q);
        TopScoreDocCollector c = TopScoreDocCollector.create(10, Integer.MAX_VALUE);
        s.search(q, c);
        TopDocs td = c.topDocs();
        sb.append(count);
        sb.append('\t').append(td.totalHits.value);
        for (ScoreDoc sd : td.scoreDocs)
          sb.append('\t').append(s.doc(sd.doc).get("id")).append(':').append(sd.score);
      } catch (Exception e) {
        sb.append("ERROR ").append(e.getClass().getSimpleName());
      }
      out.println(sb);
    }
    System.err.printf("lucene: %d docs, %d queries in %.1f ms%n", n, qs.size(), (System.nanoTime() - t0) / 1e6);
  }
}
