import java.awt.FlowLayout;
import javax.swing.JButton;
import javax.swing.JDialog;
import javax.swing.WindowConstants;

/**
 * The modal dialog of Listing 1, opened by e3. It sits below the main window, at (0, 300)
 * with size 300x150, so its button e4 (at y = 320..370) never covers e1..e3.
 */
public class Dialog extends JDialog {
    MainWindow mainWindow;

    Dialog(MainWindow mainWindow) {
        super(mainWindow, "Dialog", true);
        this.mainWindow = mainWindow;
        setDefaultCloseOperation(WindowConstants.DISPOSE_ON_CLOSE);
        getContentPane().setLayout(new FlowLayout(FlowLayout.LEFT, 20, 20));

        JButton b4 = new JButton("e4");
        b4.addActionListener(e -> e4());
        MainWindow.style(b4);
        getContentPane().add(b4);
        setBounds(0, 300, 300, 150);
    }

    void e4() {
        mainWindow.text = null;
        closeDialog();
    }

    void closeDialog() {
        dispose();
    }
}
