// pgJDBC against dpsql serve: run by tests/server/test_clients.py as
// java -cp postgresql.jar JdbcProbe.java URL USER PASSWORD (Java 11+ source-file mode).
import java.sql.*;
import java.util.Properties;

public class JdbcProbe {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.setProperty("user", args[1]);
        props.setProperty("password", args[2]);
        try (Connection con = DriverManager.getConnection(args[0], props)) {
            try (Statement st = con.createStatement()) {
                st.execute("SET dpsql.epsilon = 1");  // two questions spend the budget
            }
            try (Statement st = con.createStatement();
                 ResultSet rs = st.executeQuery("SELECT sex, COUNT(*) AS n FROM pums GROUP BY sex")) {
                ResultSetMetaData md = rs.getMetaData();
                System.out.println("types " + md.getColumnTypeName(1) + " " + md.getColumnTypeName(2));
                while (rs.next()) System.out.println("row " + rs.getLong(1) + " " + rs.getLong(2));
            }
            try (PreparedStatement ps = con.prepareStatement(
                    "SELECT COUNT(*) AS n FROM pums WHERE age > ?")) {
                ps.setInt(1, 40);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) System.out.println("prepared " + rs.getLong(1));
                }
            }
            try (Statement st = con.createStatement();
                 ResultSet rs = st.executeQuery(
                         "SELECT ARRAY[CAST(0.5 AS DOUBLE PRECISION), 2.0, NULL] AS q")) {
                rs.next();
                Double[] values = (Double[]) rs.getArray(1).getArray();
                System.out.println("array " + rs.getMetaData().getColumnTypeName(1) + " "
                                   + java.util.Arrays.toString(values));
            }
            refused(con, "SELECT * FROM pums", "refused");
            refused(con, "SELECT COUNT(*) AS n FROM pums WHERE age > 70", "budget");
            DatabaseMetaData meta = con.getMetaData();
            try (ResultSet rs = meta.getTables(null, null, "%", new String[]{"TABLE"})) {
                while (rs.next()) System.out.println("table " + rs.getString("TABLE_NAME"));
            }
            try (ResultSet rs = meta.getColumns(null, null, "pums", "%")) {
                while (rs.next()) {
                    System.out.println("column " + rs.getString("COLUMN_NAME") + " "
                                       + rs.getString("TYPE_NAME"));
                }
            }
            try (ResultSet rs = meta.getSchemas()) {
                while (rs.next()) System.out.println("schema " + rs.getString(1));
            }
        }
    }

    static void refused(Connection con, String sql, String label) {
        try (Statement st = con.createStatement()) {
            st.executeQuery(sql);
            System.out.println(label + " answered");
        } catch (SQLException e) {
            System.out.println(label + " " + e.getSQLState());
        }
    }
}
