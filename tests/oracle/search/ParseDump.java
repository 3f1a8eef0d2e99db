import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.queryparser.simple.SimpleQueryParser;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.Query;
import java.nio.file.*;
import java.util.*;
public class ParseDump {
  public static void main(String[] a) throws Exception {
    StandardAnalyzer an = new StandardAnalyzer(CharArraySet.EMPTY_SET);
    for (String line : Files.readAllLines(Paths.get(a[0]))) {
      if (a.length > 1 && a[1].startsWith("simple")) {
        SimpleQueryParser sp = new SimpleQueryParser(an, "body");
        if (a[1].equals("simple_and")) sp.setDefaultOperator(BooleanClause.Occur.MUST);
        System.out.println(line + "\t" + sp.parse(line).toString());
        continue;
      }
      QueryParser qp = new QueryParser("body", an);
      qp.setAllowLeadingWildcard(true);
      if (a.length > 1) qp.setDefaultOperator(QueryParser.Operator.AND);
      try { Query q = qp.parse(line); System.out.println(line + "\t" + q.toString()); }
      catch (Exception e) { System.out.println(line + "\tERROR " + e.getClass().getSimpleName()); }
    }
  }
}
