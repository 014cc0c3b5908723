// Package all registers every Query Runner engine: import it for its side effect.
//
// Postgres, Redshift (PostgreSQL protocol, pgx), Mysql (MySQL and MariaDB,
// go-sql-driver), Mssql (go-mssqldb), Trino (trino-go-client), Snowflake (SQL API
// over HTTPS) and BigQuery (REST API over HTTPS). Postgres and Mysql (on MariaDB) are
// tested against real servers; Trino, Snowflake and BigQuery against fakes of their
// HTTP protocols; Redshift (the Postgres engine's code path) and Mssql are registered
// but untested here.
package all

import (
	_ "github.com/meridian-catalog/meridian/queryrunner/engine/bigquery"  // BigQuery
	_ "github.com/meridian-catalog/meridian/queryrunner/engine/mssql"     // Mssql
	_ "github.com/meridian-catalog/meridian/queryrunner/engine/mysql"     // Mysql
	_ "github.com/meridian-catalog/meridian/queryrunner/engine/postgres"  // Postgres, Redshift
	_ "github.com/meridian-catalog/meridian/queryrunner/engine/snowflake" // Snowflake
	_ "github.com/meridian-catalog/meridian/queryrunner/engine/trino"     // Trino
)
