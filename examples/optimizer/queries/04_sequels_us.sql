-- Recent American sequels: the keyword is tied to year and kind.
SELECT min(t.production_year), count(*)
FROM title t
JOIN movie_keyword mk ON mk.movie_id = t.id
JOIN keyword k ON k.id = mk.keyword_id
JOIN movie_companies mc ON mc.movie_id = t.id
JOIN company c ON c.id = mc.company_id
WHERE k.keyword = 'sequel' AND t.production_year >= 2005 AND t.kind_id = 1
  AND c.country_code = '[us]' AND mc.company_type = 'production companies';
