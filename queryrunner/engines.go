package queryrunner

// The engines Query Runner serves register themselves with package engine when
// imported: PostgreSQL and Redshift (pgx), MySQL and MariaDB (go-sql-driver).
import (
	_ "github.com/meridian-catalog/meridian/queryrunner/engine/mysql"
	_ "github.com/meridian-catalog/meridian/queryrunner/engine/postgres"
)
