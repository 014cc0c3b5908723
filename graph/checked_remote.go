package graph

// DescribeSelect is, for a checked DESCRIBE query, the SELECT that binds the resources
// it describes ("" for the other forms). A remote Backend runs it and then fetches the
// triples of those resources, so that DESCRIBE answers the same on every backend.
func (c *Checked) DescribeSelect() string { return c.describe }
