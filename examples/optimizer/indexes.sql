-- Foreign-key indexes on the link tables (as the JOB setups that add them), so the planner has
-- nested loops with index scans to choose.
create index cast_info_movie on cast_info (movie_id);
create index cast_info_person on cast_info (person_id);
create index movie_companies_movie on movie_companies (movie_id);
create index movie_companies_company on movie_companies (company_id);
create index movie_keyword_movie on movie_keyword (movie_id);
create index movie_keyword_keyword on movie_keyword (keyword_id);
create index title_kind on title (kind_id);

-- statistics for the planner (a study's default_statistics_target points ANALYZE again)
analyze;
