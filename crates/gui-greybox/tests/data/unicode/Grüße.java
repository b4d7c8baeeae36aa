// Non-ASCII names everywhere a class file keeps one: classes, fields, methods, method
// descriptors (`grüßen:(LStraße;)V`), lambdas and string constants. Compiled by
// tests/java_analysis.rs; its class is also the fuzz seed
// fuzz/corpus/class_file/Gruesse.class, made with
//   javac -g -d /tmp/gruesse Grüße.java && cp /tmp/gruesse/Grüße.class fuzz/corpus/class_file/Gruesse.class
import java.awt.event.ActionListener;
import javax.swing.JButton;

class Straße {
    String name = "Hauptstraße";
}

public class Grüße {
    private int zähler;
    private Straße straße = new Straße();

    void grüßen(Straße s) {
        zähler++;
        System.out.println(s.name + zähler);
    }

    static long länge(String wort, double[] werte) {
        return wort.length() + werte.length;
    }

    void verdrahten() {
        JButton knopf = new JButton("Grüß Gott");
        knopf.addActionListener(e -> grüßen(straße));
        ActionListener zurück = e -> zähler = 0;
        knopf.addActionListener(zurück);
        Runnable r = this::verdrahten;
        länge("ß", new double[] {1.0});
    }
}
