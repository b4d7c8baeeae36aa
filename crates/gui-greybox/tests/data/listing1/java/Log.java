/** Where e3 writes the text when the dialog is disabled. It keeps no state of its own. */
final class Log {
    private Log() {}

    static void write(String message) {
        System.err.println("log: " + message);
    }
}
