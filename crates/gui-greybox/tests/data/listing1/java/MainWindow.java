import java.awt.Dimension;
import java.awt.FlowLayout;
import java.awt.Font;
import java.awt.Insets;
import javax.swing.JButton;
import javax.swing.JFrame;
import javax.swing.SwingUtilities;
import javax.swing.WindowConstants;

/**
 * The example application of Listing 1 in Arlt et al., "A Grey-box Approach for Automated
 * GUI-Testing" (ISSTA 2012), as a runnable Swing program.
 *
 * <p>Clicking e3, then e4 in the modal dialog, then e2 throws a NullPointerException in
 * e2: e4 sets {@code text} to null and e2 dereferences it.
 *
 * <p>The geometry is fixed because there is no window manager under Xvfb: the window
 * sits at (0, 0) with size 400x200 and the buttons are 100x50 at y = 20..70.
 */
public class MainWindow extends JFrame {
    boolean enabled = true;
    String text = "Hello World";

    MainWindow() {
        super("Listing 1");
        setDefaultCloseOperation(WindowConstants.EXIT_ON_CLOSE);
        getContentPane().setLayout(new FlowLayout(FlowLayout.LEFT, 20, 20));

        JButton b1 = new JButton("e1");
        b1.addActionListener(e -> e1());
        JButton b2 = new JButton("e2");
        b2.addActionListener(e -> e2());
        JButton b3 = new JButton("e3");
        b3.addActionListener(e -> e3());
        for (JButton button : new JButton[] {b1, b2, b3}) {
            style(button);
            getContentPane().add(button);
        }
        setBounds(0, 0, 400, 200);
    }

    /** Large buttons with large text, so that a screenshot-based detector finds them. */
    static void style(JButton button) {
        button.setPreferredSize(new Dimension(100, 50));
        button.setMargin(new Insets(0, 0, 0, 0));
        button.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 20));
        button.setFocusPainted(false);
    }

    void e1() {
        enabled = false;
    }

    void e2() {
        text = text.toLowerCase();
    }

    void e3() {
        if (enabled)
            openDialog();
        else
            Log.write(text);
    }

    void openDialog() {
        Dialog dialog = new Dialog(this);
        dialog.setVisible(true);
    }

    public static void main(String[] args) {
        SwingUtilities.invokeLater(() -> new MainWindow().setVisible(true));
    }
}
