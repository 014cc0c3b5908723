package graph
const rdfType = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
