\startpipeline
\endpipeline x
