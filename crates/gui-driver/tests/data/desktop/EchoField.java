import javax.swing.JButton;
import javax.swing.JFrame;
import javax.swing.JPanel;
import javax.swing.JTextField;
import javax.swing.SwingUtilities;

/**
 * A test app for the desktop device: a text field that prints its text on Enter and a
 * button whose handler throws. Undecorated at 0,0 with absolute positions, so the test
 * knows where the widgets are: field (10,10,280,30), button (10,50,120,30).
 */
public class EchoField {
    private static String missing;

    public static void main(String[] args) {
        SwingUtilities.invokeLater(() -> {
            JFrame frame = new JFrame("echo field");
            frame.setUndecorated(true);
            frame.setDefaultCloseOperation(JFrame.EXIT_ON_CLOSE);
            JPanel panel = new JPanel(null);
            JTextField field = new JTextField();
            field.setBounds(10, 10, 280, 30);
            field.addActionListener(e -> {
                System.out.println("typed: " + field.getText());
                System.out.flush();
            });
            JButton boom = new JButton("boom");
            boom.setBounds(10, 50, 120, 30);
            boom.addActionListener(e -> explode());
            panel.add(field);
            panel.add(boom);
            frame.setContentPane(panel);
            frame.setBounds(0, 0, 300, 100);
            frame.setVisible(true);
            // Printed once the frame is on screen and the event queue is idle.
            SwingUtilities.invokeLater(() -> {
                System.out.println("ready");
                System.out.flush();
            });
        });
    }

    static void explode() {
        System.out.println(missing.length()); // throws here
    }
}
