\startpipeline now
\endpipeline
