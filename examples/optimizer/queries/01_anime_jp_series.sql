-- Series tagged 'anime' made by Japanese companies: kind, keyword and country go together.
SELECT min(t.title), count(*)
FROM title t
JOIN movie_keyword mk ON mk.movie_id = t.id
JOIN keyword k ON k.id = mk.keyword_id
JOIN movie_companies mc ON mc.movie_id = t.id
JOIN company c ON c.id = mc.company_id
WHERE k.keyword = 'anime' AND c.country_code = '[jp]' AND t.kind_id = 2;
